import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import type { DeadLetter } from '../../src/ingestion/dead-letter-store.ts'
import { createClickHouseDeadLetterStore } from '../../src/storage/clickhouse/clickhouse-dead-letter-store.ts'
import { createClickHouseEventReadStore } from '../../src/storage/clickhouse/clickhouse-event-read-store.ts'
import { createClickHouseEventStore } from '../../src/storage/clickhouse/clickhouse-event-store.ts'
import { stringLiteral } from '../../src/storage/clickhouse/clickhouse-literals.ts'
import { createClickHouseQueryEngine } from '../../src/storage/clickhouse/clickhouse-query-engine.ts'
import { openClickHouse } from '../../src/storage/clickhouse/open-clickhouse.ts'
import { deadLetterFromRow } from '../contracts/dead-letter-store.contract.ts'
import { clickHouseStatement, freshClickHouseUrl, skipWithoutClickHouse } from '../helpers/clickhouse.ts'
import { eventSqlConformance } from './event-sql.conformance.ts'
import { anEvent } from '../contracts/builders.ts'

const uuidOf = (i: number) => `0190a000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`

// The event-SQL conformance suite and the event-side store contracts on ClickHouse (CI: Debian's
// 18.16): one server for the file (test/helpers/clickhouse.ts), a fresh database per test, opened
// through the app's migrations. 18.16 has no window functions: the dialect computes them as sorted
// per-partition arrays (clickhouse-window-arrays.ts), and their cases must answer as DuckDB's windows do.
process.env.TZ = 'Asia/Kathmandu'

async function openDatabase() {
  const ch = await openClickHouse(await freshClickHouseUrl(), MIGRATIONS.clickhouse)
  return {
    ch,
    async close() {
      await ch.close()
      await clickHouseStatement(`DROP DATABASE IF EXISTS \`${ch.database}\``)
    },
  }
}

const skip = skipWithoutClickHouse()
if (skip) {
  test('clickhouse event-SQL conformance and event-side store contracts', { skip }, () => {})
} else {
  eventSqlConformance('clickhouse', async () => {
    const { ch, close } = await openDatabase()
    const events = await createClickHouseEventStore(ch)
    const query = createClickHouseQueryEngine(ch, { concurrency: 2 })
    // The store's close waits for its last batch; the database is dropped after it.
    return { events, query, close: () => events.close().then(close) }
  }, {
    contracts: {
      async events() {
        const { ch, close } = await openDatabase()
        const events = await createClickHouseEventStore(ch)
        return { port: { events, reads: createClickHouseEventReadStore(ch) }, close: () => events.close().then(close) }
      },
      async deadLetters() {
        const { ch, close } = await openDatabase()
        const letters = createClickHouseDeadLetterStore(ch)
        async function readAll(): Promise<DeadLetter[]> {
          const rows = await ch.query<Record<string, string | number | null>>(
            'SELECT failed_at_ms AS failed_ms, uuid, project_id, step, reason, error, payload FROM events_dead_letter',
          )
          return rows.map(deadLetterFromRow)
        }
        return { port: { letters, readAll }, close }
      },
    },
  })

  test('clickhouse events: a batch redelivered to a second writer (the first stored it and died before its ack) is not stored again', async (t) => {
    const { ch, close } = await openDatabase()
    t.after(close)
    // Two worker processes on one database: each event store remembers only its own inserts.
    const first = await createClickHouseEventStore(ch)
    const second = await createClickHouseEventStore(ch)
    t.after(() => Promise.all([first.close(), second.close()]))
    const batch = Array.from({ length: 2500 }, (_, i) => anEvent({ uuid: uuidOf(i) }))
    assert.deepEqual(await first.insertBatch(batch), { inserted: 2500 })
    // The queue marks the batch as delivered before: every uuid is confirmed against the table (in slices).
    assert.deepEqual(await second.insertBatch([...batch, anEvent({ uuid: uuidOf(9999) })], { redelivered: true }), { inserted: 1 })
    const rows = await ch.query<{ n: string; d: string }>('SELECT count() AS n, uniqExact(uuid) AS d FROM events')
    assert.deepEqual(rows[0], { n: '2501', d: '2501' })
  })

  test('clickhouse literals: every string round-trips through a rendered literal, and an injection attempt is only text', async (t) => {
    const { ch, close } = await openDatabase()
    t.after(close)
    // 18.16 has no query parameters: every value is rendered by stringLiteral. A seeded mix of the
    // characters that break quoting (quote, backslash, NUL, newlines, U+2028, comment starts, emoji).
    const alphabet = ["'", '\\', '"', '\n', '\r', '\t', '\0', '\u2028', '😀', ';', '--', '/*', '\\N', 'a', ' ', '`', '%', '_']
    let seed = 7
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    const strings = Array.from({ length: 300 }, () => Array.from({ length: Math.floor(rand() * 12) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join(''))
    const rows = await ch.query<{ v: string }>(strings.map((s) => `SELECT ${stringLiteral(s)} AS v`).join(' UNION ALL '))
    assert.deepEqual(rows.map((r) => r.v).sort(), [...strings].sort())
    const attack = "x' OR 1=1 -- \\' ; DROP TABLE events"
    const found = await ch.query<{ n: number | string }>(`SELECT count() AS n FROM system.one WHERE ${stringLiteral(attack)} = 'x'`)
    assert.equal(Number(found[0]!.n), 0)
    assert.equal((await ch.query<{ n: string }>("SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = 'events'"))[0]!.n, '1')
  })
}
