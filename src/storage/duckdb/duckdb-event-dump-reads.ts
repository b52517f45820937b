import type { DuckDBConnection } from '@duckdb/node-api'
import type { StoredEvent } from '../../ingestion/event-store.ts'
import type { EventDumpReads, StoredOverride } from '../../modules/events/event-dump-reads.ts'

const BATCH_ROWS = 10_000

/** The whole event store of a DuckDB file, streamed on a connection of its own (see EventDumpReads). */
export function createDuckDbEventDumpReads(db: { connect(): Promise<DuckDBConnection>; disconnect(c: DuckDBConnection): void }): EventDumpReads {
  return {
    async *events() {
      const c = await db.connect()
      try {
        const result = await c.stream(`SELECT uuid::VARCHAR AS uuid, project_id, event, distinct_id, properties, elements_chain,
            epoch_ms(timestamp) AS ts, epoch_ms(created_at) AS created, person_id::VARCHAR AS person_id, person_properties,
            group_0, group_1, group_2, group_3, group_4
          FROM events ORDER BY timestamp, uuid`)
        const names = result.columnNames()
        let batch: StoredEvent[] = []
        for (;;) {
          const chunk = await result.fetchChunk()
          if (!chunk || chunk.rowCount === 0) break
          for (const r of chunk.getRowObjects(names)) {
            batch.push({
              uuid: String(r.uuid),
              projectId: Number(r.project_id),
              event: String(r.event),
              distinctId: String(r.distinct_id),
              properties: String(r.properties),
              elementsChain: String(r.elements_chain ?? ''),
              timestamp: new Date(Number(r.ts)),
              createdAt: new Date(Number(r.created)),
              personId: r.person_id === null ? null : String(r.person_id),
              personProperties: r.person_properties === null ? null : String(r.person_properties),
              groups: [r.group_0, r.group_1, r.group_2, r.group_3, r.group_4].map((g) => (g === null ? null : String(g))),
            })
          }
          if (batch.length >= BATCH_ROWS) {
            yield batch
            batch = []
          }
        }
        if (batch.length > 0) yield batch
      } finally {
        db.disconnect(c)
      }
    },
    async overrides(): Promise<StoredOverride[]> {
      const c = await db.connect()
      try {
        const rows = (await c.runAndReadAll(
          'SELECT project_id, old_person_id::VARCHAR AS old, override_person_id::VARCHAR AS target FROM person_overrides ORDER BY project_id, old',
        )).getRowObjects()
        return rows.map((r) => ({ projectId: Number(r.project_id), oldPersonId: String(r.old), overridePersonId: String(r.target) }))
      } finally {
        db.disconnect(c)
      }
    },
  }
}
