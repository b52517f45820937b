import { randomUUID } from 'node:crypto'
import type { PersonDataReader, PersonDataWriter, StoredPerson } from '../../modules/persons/person-data-store.ts'
import type { SqlClient } from './sql-client.ts'

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
      const rows = await db.query(
        `SELECT d.distinct_id, p.id, p.properties, ${cohorts} AS cohorts
         FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
         WHERE d.project_id = $1 AND d.distinct_id = ANY($2::text[])`,
        [projectId, distinctIds],
      )
      const out = new Map<string, StoredPerson>()
      for (const r of rows) {
        out.set(r.distinct_id, { personId: Number(r.id), properties: asObject(r.properties), staticCohortIds: r.cohorts ?? [] })
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
        [projectId, refs.map((r) => r.groupTypeIndex), refs.map((r) => r.groupKey)],
      )
      return new Map(rows.map((r) => [`${r.group_type_index}:${r.group_key}`, asObject(r.group_properties)]))
    },
    async getHashKeyOverrides(projectId, distinctIds) {
      const rows = await db.query(
        `SELECT d.distinct_id, o.feature_flag_key, o.hash_key FROM person_distinct_ids d
         JOIN feature_flag_hash_key_overrides o ON o.project_id = d.project_id AND o.person_id = d.person_id
         WHERE d.project_id = $1 AND d.distinct_id = ANY($2::text[])`,
        [projectId, distinctIds],
      )
      return rows.map((r) => ({ distinctId: r.distinct_id, flagKey: r.feature_flag_key, hashKey: r.hash_key }))
    },
    async writeHashKeyOverrides({ projectId, distinctIds, flagKeys, hashKey }) {
      await db.query(
        `INSERT INTO feature_flag_hash_key_overrides (project_id, person_id, feature_flag_key, hash_key)
         SELECT DISTINCT $1::int, d.person_id, k.key, $4::text FROM person_distinct_ids d, unnest($3::text[]) AS k(key)
         WHERE d.project_id = $1 AND d.distinct_id = ANY($2::text[])
         ON CONFLICT DO NOTHING`,
        [projectId, distinctIds, flagKeys, hashKey],
      )
    },
    async ensurePersons(projectId, distinctIds) {
      const unique = [...new Set(distinctIds)]
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
      return new Map(rows.map((r) => [r.distinct_id as string, Number(r.person_id)]))
    },
    async findPersonIdsByUuid(projectId, uuids) {
      const valid = uuids.filter((u) => /^[0-9a-f-]{36}$/i.test(u))
      const rows = await db.query('SELECT id FROM persons WHERE project_id = $1 AND uuid = ANY($2::uuid[])', [projectId, valid])
      return rows.map((r) => Number(r.id))
    },
    async upsertPersons(projectId, persons) {
      if (persons.length === 0) return
      const ids = persons.map((p) => p.distinctId)
      const props = persons.map((p) => JSON.stringify(p.properties))
      await db.inTransaction((tx) => upsertPersonRows(tx, projectId, ids, props))
    },
    async upsertGroups(projectId, groups) {
      if (groups.length === 0) return
      await db.query(
        `INSERT INTO groups (project_id, group_type_index, group_key, group_properties)
         SELECT $1, * FROM unnest($2::int[], $3::text[], $4::jsonb[])
         ON CONFLICT (project_id, group_type_index, group_key) DO UPDATE SET group_properties = EXCLUDED.group_properties`,
        [projectId, groups.map((g) => g.groupTypeIndex), groups.map((g) => g.groupKey), groups.map((g) => JSON.stringify(g.properties))],
      )
    },
  }
}
