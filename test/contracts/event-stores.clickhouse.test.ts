import { test } from 'node:test'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import { createClickHouseEventReadStore } from '../../src/storage/clickhouse/clickhouse-event-read-store.ts'
import { createClickHouseEventStore } from '../../src/storage/clickhouse/clickhouse-event-store.ts'
import { openClickHouse } from '../../src/storage/clickhouse/open-clickhouse.ts'
import { freshClickHouseUrl, skipWithoutClickHouse, clickHouseStatement } from '../helpers/clickhouse.ts'
import { eventStoreContract } from './event-store.contract.ts'
import { deadLetterStoreContract } from './dead-letter-store.contract.ts'
import type { DeadLetter } from '../../src/ingestion/dead-letter-store.ts'
import { createClickHouseDeadLetterStore } from '../../src/storage/clickhouse/clickhouse-dead-letter-store.ts'

// The same event-side contracts as event-stores.duckdb.test.ts, on ClickHouse: one server for the
// file (test/helpers/clickhouse.ts), a fresh database per test, opened through the app's migrations.
process.env.TZ = 'Asia/Kathmandu'

async function openDatabase() {
  const url = await freshClickHouseUrl()
  const ch = await openClickHouse(url, MIGRATIONS.clickhouse)
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
  test('clickhouse event-side store contracts', { skip }, () => {})
} else {
  eventStoreContract('clickhouse', async () => {
    const { ch, close } = await openDatabase()
    const events = await createClickHouseEventStore(ch)
    const reads = createClickHouseEventReadStore(ch)
    return {
      port: { events, reads },
      async close() {
        await events.close()
        await close()
      },
    }
  })

  deadLetterStoreContract('clickhouse', async () => {
    const { ch, close } = await openDatabase()
    const letters = createClickHouseDeadLetterStore(ch)
    async function readAll(): Promise<DeadLetter[]> {
      const rows = await ch.query<Record<string, string | number | null>>(
        'SELECT failed_at_ms, uuid, project_id, step, reason, error, payload FROM events_dead_letter',
      )
      return rows.map((r) => ({
        payload: String(r.payload),
        uuid: r.uuid === null ? null : String(r.uuid),
        projectId: r.project_id === null ? null : Number(r.project_id),
        step: String(r.step),
        reason: String(r.reason),
        error: r.error === null ? null : String(r.error),
        failedAt: new Date(Number(r.failed_at_ms)),
      }))
    }
    return { port: { letters, readAll }, close }
  })
}
