import type { PersonOverrideStore } from '../../ingestion/person-store.ts'
import type { ClickHouse } from './open-clickhouse.ts'
import { intLiteral, stringLiteral } from './clickhouse-literals.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * SQL: a project's current person overrides (old_person_id -> override_person_id), the latest version
 * of each row that is not deleted. Queries join events to it (`person_id` resolved at query time).
 */
export function currentOverridesSql(projectId: number): string {
  return `SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
    FROM person_overrides WHERE project_id = ${intLiteral(projectId)}
    GROUP BY old_person_id HAVING argMax(is_deleted, version) = 0`
}

/**
 * Versions for rows of person_overrides: microseconds of this process's clock, strictly increasing
 * (the ReplacingMergeTree and argMax keep the highest).
 */
export function overrideVersions(): () => bigint {
  let last = 0n
  return () => {
    const now = BigInt(Date.now()) * 1000n
    last = now > last ? now : last + 1n
    return last
  }
}

/**
 * Person-id overrides in ClickHouse (`person_overrides`, PostHog's person_distinct_id_overrides): rows
 * are never updated in place; a write appends the new state with a higher version. Rows that pointed
 * at a now merged-away person are appended again pointing at the new one, so there is no chain.
 */
export function createClickHousePersonOverrideStore(ch: ClickHouse): PersonOverrideStore {
  let chain: Promise<unknown> = Promise.resolve()
  const version = overrideVersions()
  async function write(projectId: number, overrides: readonly { oldPersonId: string; overridePersonId: string }[]) {
    if (overrides.length === 0) return
    for (const o of overrides) {
      if (!UUID.test(o.oldPersonId) || !UUID.test(o.overridePersonId)) {
        throw Object.assign(new Error(`person override with a non-UUID id: ${o.oldPersonId} -> ${o.overridePersonId}`), { transient: false })
      }
    }
    const newOf = new Map(overrides.map((o) => [o.oldPersonId.toLowerCase(), o.overridePersonId.toLowerCase()]))
    // Compared as text: 18.16 refuses a UUID literal in IN against an aggregated UUID ("Got: UInt128").
    const olds = [...newOf.keys()].map(stringLiteral).join(', ')
    const pointing = await ch.query<{ old: string; target: string }>(
      `SELECT toString(old_person_id) AS old, toString(override_person_id) AS target FROM (${currentOverridesSql(projectId)})
       WHERE toString(override_person_id) IN (${olds})`,
    )
    const rows: Array<Record<string, unknown>> = []
    for (const p of pointing) rows.push(row(projectId, p.old, newOf.get(p.target)!, version()))
    for (const [old, target] of newOf) rows.push(row(projectId, old, target, version()))
    await ch.insert('person_overrides', rows)
  }
  return {
    write(projectId, overrides) {
      const run = chain.then(() => write(projectId, overrides))
      chain = run.catch(() => undefined)
      return run
    },
  }
}

export function row(projectId: number, old: string, target: string, version: bigint, deleted = false): Record<string, unknown> {
  return { project_id: projectId, old_person_id: old, override_person_id: target, version: String(version), is_deleted: deleted ? 1 : 0 }
}
