import { randomUUID } from 'node:crypto'
import type { PersonDataReader, PersonDataWriter, StoredPerson } from '../../modules/persons/person-data-store.ts'
import type { SqlClient } from './sql-client.ts'
import { toPgJson, toPgText } from './sql-text.ts'

// PostgreSQL's own spelling of a UUID; anything else would fail the ::uuid cast of the whole query.
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i

/** Distinct ids as stored (see toPgText), and the map back to the ids the caller asked for. */
function storedIds(distinctIds: readonly string[]): { ids: string[]; askedAs: (stored: string) => string[] } {
  const asked = new Map<string, string[]>()
  for (const id of distinctIds) {
    const stored = toPgText(id)
    const list = asked.get(stored)
    if (!list) asked.set(stored, [id])
    else if (!list.includes(id)) list.push(id)
  }
  return { ids: [...asked.keys()], askedAs: (stored) => asked.get(stored) ?? [stored] }
}

const asObject = (v: unknown): Record<string, unknown> => (typeof v === 'string' ? JSON.parse(v) : (v ?? {})) as Record<string, unknown>

/** Person, group and continuity data over any SqlClient; every method is one or two set-based statements. */
export function createSqlPersonDataStore(db: SqlClient): PersonDataReader & PersonDataWriter {
  async function upsertPersonRows(q: SqlClient, projectId: number, distinctIds: readonly string[], properties: readonly string[]) {
    // New distinct ids get a new person; existing ones get their properties replaced.
    await q.query(
      `WITH input AS (SELECT * FROM unnest($2::text[], $3::jsonb[], $4::uuid[]) AS t(distinct_id, properties, uuid)),
       fresh AS (
         INSERT INTO persons (uuid, project_id, properties)
         SELECT i.uuid, $1, i.properties FROM input i
         WHERE NOT EXISTS (SELECT 1 FROM person_distinct_ids d WHERE d.project_id = $1 AND d.distinct_id = i.distinct_id)
         RETURNING id, uuid),
       linked AS (
         INSERT INTO person_distinct_ids (project_id, distinct_id, person_id)
         SELECT $1, i.distinct_id, f.id FROM fresh f JOIN input i ON i.uuid = f.uuid ON CONFLICT DO NOTHING)
       UPDATE persons p SET properties = i.properties FROM input i, person_distinct_ids d
       WHERE d.project_id = $1 AND d.distinct_id = i.distinct_id AND p.id = d.person_id`,
      [projectId, distinctIds, properties, distinctIds.map(() => randomUUID())],
    )
  }
  return {
    async getPersons(projectId, distinctIds, opts = {}) {
      const cohorts = opts.withCohorts ? 'ARRAY(SELECT cohort_id FROM cohort_people c WHERE c.person_id = p.id)' : 'NULL'
      const wanted = storedIds(distinctIds)
      const rows = await db.query(
        `SELECT d.distinct_id, p.id, p.properties, ${cohorts} AS cohorts
         FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
         WHERE d.project_id = $1 AND d.distinct_id = ANY($2::text[])`,
        [projectId, wanted.ids],
      )
      const out = new Map<string, StoredPerson>()
      for (const r of rows) {
        const person = { personId: Number(r.id), properties: asObject(r.properties), staticCohortIds: r.cohorts ?? [] }
        for (const id of wanted.askedAs(r.distinct_id)) out.set(id, person)
      }
      return out
    },
    async scanPersons(projectId, { beforePersonId, limit, withCohorts }) {
      const cohorts = withCohorts ? 'ARRAY(SELECT cohort_id FROM cohort_people c WHERE c.person_id = p.id)' : 'NULL'
      // Pages walk the primary key backwards whatever the project (a plan that needs no table
      // statistics, which embedded PGlite never gathers); other projects' rows come back as bare ids.
      // The page is cut in a sub-query first, so the sub-plans above run for its rows only.
      const rows = await db.query(
        `SELECT p.id, p.project_id = $1 AS mine, CASE WHEN p.project_id = $1 THEN p.properties END AS properties,
                CASE WHEN p.project_id = $1 THEN ${cohorts} END AS cohorts,
                CASE WHEN p.project_id = $1 THEN ARRAY(SELECT d.distinct_id FROM person_distinct_ids d WHERE d.person_id = p.id) END AS distinct_ids
         FROM (SELECT id, project_id, properties FROM persons WHERE id < $2::bigint ORDER BY id DESC LIMIT $3) p
         ORDER BY p.id DESC`,
        [projectId, beforePersonId ?? '9223372036854775807', limit],
      )
      const persons: Array<{ distinctId: string; person: StoredPerson }> = []
      for (const r of rows) {
        if (!r.mine) continue
        const person = { personId: Number(r.id), properties: asObject(r.properties), staticCohortIds: r.cohorts ?? [] }
        for (const distinctId of r.distinct_ids as string[]) persons.push({ distinctId, person })
      }
      return { persons, next: rows.length < limit ? null : Number(rows[rows.length - 1].id) }
    },
    async getGroups(projectId, refs) {
      if (refs.length === 0) return new Map()
      const rows = await db.query(
        `SELECT g.group_type_index, g.group_key, g.group_properties FROM groups g
         JOIN unnest($2::int[], $3::text[]) AS r(i, k) ON g.group_type_index = r.i AND g.group_key = r.k
         WHERE g.project_id = $1`,
        [projectId, refs.map((r) => r.groupTypeIndex), refs.map((r) => toPgText(r.groupKey))],
      )
      const byStoredKey = new Map(rows.map((r) => [`${r.group_type_index}:${r.group_key}`, asObject(r.group_properties)]))
      const out = new Map<string, Record<string, unknown>>()
      for (const ref of refs) {
        const found = byStoredKey.get(`${ref.groupTypeIndex}:${toPgText(ref.groupKey)}`)
        if (found) out.set(`${ref.groupTypeIndex}:${ref.groupKey}`, found)
      }
      return out
    },
    async getHashKeyOverrides(projectId, distinctIds) {
      const wanted = storedIds(distinctIds)
      const rows = await db.query(
        `SELECT d.distinct_id, o.feature_flag_key, o.hash_key FROM person_distinct_ids d
         JOIN feature_flag_hash_key_overrides o ON o.project_id = d.project_id AND o.person_id = d.person_id
         WHERE d.project_id = $1 AND d.distinct_id = ANY($2::text[])`,
        [projectId, wanted.ids],
      )
      return rows.flatMap((r) =>
        wanted.askedAs(r.distinct_id).map((distinctId) => ({ distinctId, flagKey: r.feature_flag_key, hashKey: r.hash_key })),
      )
    },
    async writeHashKeyOverrides({ projectId, distinctIds, flagKeys, hashKey }) {
      await db.query(
        `INSERT INTO feature_flag_hash_key_overrides (project_id, person_id, feature_flag_key, hash_key)
         SELECT DISTINCT $1::int, d.person_id, k.key, $4::text FROM person_distinct_ids d, unnest($3::text[]) AS k(key)
         WHERE d.project_id = $1 AND d.distinct_id = ANY($2::text[])
         ON CONFLICT DO NOTHING`,
        [projectId, distinctIds.map(toPgText), flagKeys.map(toPgText), toPgText(hashKey)],
      )
    },
    async ensurePersons(projectId, distinctIds) {
      const wanted = storedIds(distinctIds)
      const unique = wanted.ids
      await db.inTransaction(async (tx) => {
        await tx.query(
          `WITH input AS (SELECT * FROM unnest($2::text[], $3::uuid[]) AS t(distinct_id, uuid)
                          WHERE NOT EXISTS (SELECT 1 FROM person_distinct_ids d WHERE d.project_id = $1 AND d.distinct_id = t.distinct_id)),
           fresh AS (INSERT INTO persons (uuid, project_id) SELECT uuid, $1 FROM input RETURNING id, uuid)
           INSERT INTO person_distinct_ids (project_id, distinct_id, person_id)
           SELECT $1, i.distinct_id, f.id FROM fresh f JOIN input i ON i.uuid = f.uuid ON CONFLICT DO NOTHING`,
          [projectId, unique, unique.map(() => randomUUID())],
        )
      })
      const rows = await db.query('SELECT distinct_id, person_id FROM person_distinct_ids WHERE project_id = $1 AND distinct_id = ANY($2::text[])', [
        projectId,
        unique,
      ])
      return new Map(rows.flatMap((r) => wanted.askedAs(r.distinct_id).map((id) => [id, Number(r.person_id)] as const)))
    },
    async findPersonIdsByUuid(projectId, uuids) {
      const valid = uuids.filter((u) => UUID.test(u))
      if (valid.length === 0) return []
      const rows = await db.query('SELECT id FROM persons WHERE project_id = $1 AND uuid = ANY($2::uuid[])', [projectId, valid])
      return rows.map((r) => Number(r.id))
    },
    async upsertPersons(projectId, persons) {
      if (persons.length === 0) return
      // One row per distinct id, the last one winning: a repeated id would otherwise create a second,
      // orphaned person and leave which properties stick to the planner.
      const last = new Map(persons.map((p) => [toPgText(p.distinctId), p.properties]))
      const ids = [...last.keys()]
      const props = [...last.values()].map(toPgJson)
      await db.inTransaction((tx) => upsertPersonRows(tx, projectId, ids, props))
    },
    async upsertGroups(projectId, groups) {
      if (groups.length === 0) return
      // One row per group, the last one winning: ON CONFLICT DO UPDATE refuses to touch a row twice.
      const last = [...new Map(groups.map((g) => [`${g.groupTypeIndex}:${toPgText(g.groupKey)}`, g])).values()]
      await db.query(
        `INSERT INTO groups (project_id, group_type_index, group_key, group_properties)
         SELECT $1, * FROM unnest($2::int[], $3::text[], $4::jsonb[])
         ON CONFLICT (project_id, group_type_index, group_key) DO UPDATE SET group_properties = EXCLUDED.group_properties`,
        [projectId, last.map((g) => g.groupTypeIndex), last.map((g) => toPgText(g.groupKey)), last.map((g) => toPgJson(g.properties))],
      )
    },
  }
}
