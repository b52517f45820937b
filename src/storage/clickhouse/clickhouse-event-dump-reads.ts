import { randomUUID } from 'node:crypto'
import type { StoredEvent } from '../../ingestion/event-store.ts'
import type { EventDumpReads, StoredOverride } from '../../modules/events/event-dump-reads.ts'
import type { ClickHouse } from './open-clickhouse.ts'

interface Row {
  uuid_text: string
  project_id: number
  event: string
  distinct_id: string
  properties: string
  elements_chain: string
  timestamp_ms: string
  created_at_ms: string
  person_text: string | null
  person_properties: string | null
  group_0: string | null
  group_1: string | null
  group_2: string | null
  group_3: string | null
  group_4: string | null
}

const BATCH_ROWS = 10_000

/** The whole event store of a ClickHouse database, streamed (see EventDumpReads). */
export function createClickHouseEventDumpReads(ch: ClickHouse): EventDumpReads {
  return {
    async *events() {
      let batch: StoredEvent[] = []
      const sql = `SELECT toString(uuid) AS uuid_text, project_id, event, distinct_id, properties, elements_chain, timestamp_ms, created_at_ms,
          toString(person_id) AS person_text, person_properties, group_0, group_1, group_2, group_3, group_4
        FROM events ORDER BY timestamp_ms, uuid_text`
      for await (const rows of ch.stream<Row>(sql, { queryId: `tally-dump-${randomUUID()}` })) {
        for (const r of rows) {
          batch.push({
            uuid: r.uuid_text,
            projectId: Number(r.project_id),
            event: r.event,
            distinctId: r.distinct_id,
            properties: r.properties,
            elementsChain: r.elements_chain,
            timestamp: new Date(Number(r.timestamp_ms)),
            createdAt: new Date(Number(r.created_at_ms)),
            personId: r.person_text ?? null,
            personProperties: r.person_properties,
            groups: [r.group_0, r.group_1, r.group_2, r.group_3, r.group_4],
          })
        }
        if (batch.length >= BATCH_ROWS) {
          yield batch
          batch = []
        }
      }
      if (batch.length > 0) yield batch
    },
    async overrides(): Promise<StoredOverride[]> {
      const rows = await ch.query<{ project_id: number; old: string; target: string }>(
        `SELECT project_id, toString(old_person_id) AS old, toString(argMax(override_person_id, version)) AS target
         FROM person_overrides GROUP BY project_id, old_person_id HAVING argMax(is_deleted, version) = 0 ORDER BY project_id, old`,
      )
      return rows.map((r) => ({ projectId: Number(r.project_id), oldPersonId: r.old, overridePersonId: r.target }))
    },
  }
}
