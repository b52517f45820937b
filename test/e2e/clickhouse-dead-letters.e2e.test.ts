import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import { openClickHouse } from '../../src/storage/clickhouse/open-clickhouse.ts'
import { createClickHouseDeadLetterStore } from '../../src/storage/clickhouse/clickhouse-dead-letter-store.ts'
import { aDeadLetter } from '../contracts/builders.ts'
import { freshClickHouseUrl, skipWithoutClickHouse } from '../helpers/clickhouse.ts'

test('ClickHouse dead letters: two worker processes failing events at once never give two letters one id', { skip: skipWithoutClickHouse(), timeout: 120_000 }, async (t) => {
  const url = await freshClickHouseUrl()
  // Two connections with a store each, as two worker processes on one database have.
  const [a, b] = [await openClickHouse(url, MIGRATIONS.clickhouse), await openClickHouse(url, MIGRATIONS.clickhouse)]
  t.after(() => Promise.all([a.close(), b.close()]))
  const [first, second] = [createClickHouseDeadLetterStore(a), createClickHouseDeadLetterStore(b)]
  const rounds = 10
  for (let i = 0; i < rounds; i++) {
    await Promise.all([first, second].map((store, k) => store.insert(Array.from({ length: 20 }, (_, j) => aDeadLetter({ payload: `w${k}-${i}-${j}`, projectId: 7 })))))
  }
  const listed = await first.list({ projectId: 7, offset: 0, limit: 1000 })
  assert.equal(listed.count, rounds * 2 * 20)
  const ids = new Set(listed.rows.map((r) => r.id))
  assert.equal(ids.size, listed.count, 'two letters share an id')
  // Replaying one letter by its id marks that letter alone.
  const one = listed.rows[0]!
  await second.markReplayed([one.id], new Date())
  const pending = await first.list({ projectId: 7, pendingOnly: true, offset: 0, limit: 1000 })
  assert.equal(pending.count, listed.count - 1)
  assert.ok(!pending.rows.some((r) => r.id === one.id))
})
