import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { MIGRATIONS } from '../../app/create-adapters.ts'
import { openDuckDb } from './open-duckdb.ts'

// Three levels of a 20,000-row cross join: 8e12 rows, far more than a test waits for.
const ENDLESS = 'SELECT count(*) AS n FROM t a, t b, t c WHERE (a.x * 7 + b.x + c.x) % 1000003 = 5'
/** Only a safety net, never asserted: past it the statements are interrupted whatever happened. */
const GIVE_UP_MS = 60_000

test('four queries on reads connections leave libuv\'s pool free: file reads and a ping complete while they compute, interrupt stops them', async (t) => {
  // More statements than libuv's pool has threads (4 unless UV_THREADPOOL_SIZE says otherwise).
  const statements = Math.max(4, Number(process.env.UV_THREADPOOL_SIZE ?? 4))
  const db = await openDuckDb(':memory:', MIGRATIONS.duckdb, { queryThreads: 1 })
  t.after(() => db.close())
  await db.connection.run('CREATE TABLE t AS SELECT range AS x FROM range(20000)')
  const readers = await Promise.all(Array.from({ length: statements }, () => db.connect({ reads: true })))
  const settled: string[] = []
  const running = readers.map((c, i) =>
    c.runAndReadAll(ENDLESS).then(
      () => settled.push(`${i}: answered`),
      (err: Error) => settled.push(`${i}: ${err.message.split('\n')[0]}`),
    ),
  )
  let gaveUp = false
  const safety = setTimeout(() => {
    gaveUp = true
    for (const c of readers) c.interrupt()
  }, GIVE_UP_MS)
  t.after(() => clearTimeout(safety))

  // Work that needs a thread of the pool: file reads, and the readiness check's statement.
  const monitor = await db.connect({ monitoring: true })
  for (let i = 0; i < 10; i++) await readFile(fileURLToPath(import.meta.url))
  await monitor.run('SELECT 1')
  assert.equal(gaveUp, false, 'the pool work completed only once the queries were interrupted')
  assert.deepEqual(settled, [], 'the queries are still computing')

  for (const c of readers) c.interrupt()
  await Promise.all(running)
  assert.equal(settled.length, statements)
  for (const s of settled) assert.match(s, /INTERRUPT|[Ii]nterrupted/)
  // The connections serve the next statement.
  assert.deepEqual((await readers[0]!.runAndReadAll('SELECT count(*)::INTEGER AS n FROM t')).getRowObjects(), [{ n: 20000 }])
})
