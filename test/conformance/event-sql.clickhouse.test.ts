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

// The event-SQL conformance suite and the event-side store contracts on ClickHouse (CI: Debian's
// 18.16): one server for the file (test/helpers/clickhouse.ts), a fresh database per test, opened
// through the app's migrations. 18.16 has no window functions: their cases must be refused with a 400.
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
