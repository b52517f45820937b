import type { DuckDBConnection } from '@duckdb/node-api'
import type { PersonOverrideStore } from '../../ingestion/person-store.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Person-id overrides in the events database (`person_overrides`, PostHog's
 * person_distinct_id_overrides): event queries resolve `person_id` with one LEFT JOIN. A write is one
 * transaction of two set-based statements: re-point rows that pointed at a now merged-away person
 * (no chains), then insert or replace the new rows.
 */
export function createDuckDbPersonOverrideStore(c: DuckDBConnection): PersonOverrideStore {
  let chain: Promise<unknown> = Promise.resolve()
  async function write(projectId: number, overrides: readonly { oldPersonId: string; overridePersonId: string }[]) {
    if (overrides.length === 0) return
    for (const o of overrides) {
      if (!UUID.test(o.oldPersonId) || !UUID.test(o.overridePersonId)) throw Object.assign(new Error(`person override with a non-UUID id: ${o.oldPersonId} -> ${o.overridePersonId}`), { transient: false })
    }
    // UUIDs checked above: safe to inline (the node API binds no list of structs).
    const values = overrides.map((o) => `('${o.oldPersonId}'::UUID, '${o.overridePersonId}'::UUID)`).join(', ')
    const project = Number(projectId) | 0
    await c.run('BEGIN TRANSACTION')
    try {
      await c.run(`UPDATE person_overrides SET override_person_id = v.new_id
        FROM (VALUES ${values}) AS v(old_id, new_id)
        WHERE person_overrides.project_id = ${project} AND person_overrides.override_person_id = v.old_id`)
      await c.run(`INSERT OR REPLACE INTO person_overrides (project_id, old_person_id, override_person_id, version)
        SELECT ${project}, old_id, new_id, 0 FROM (VALUES ${values}) AS v(old_id, new_id)`)
      await c.run('COMMIT')
    } catch (err) {
      await c.run('ROLLBACK').catch(() => undefined)
      throw err
    }
  }
  return {
    write(projectId, overrides) {
      const run = chain.then(() => write(projectId, overrides))
      chain = run.catch(() => undefined)
      return run
    },
  }
}
