import type { PersonState } from '../../domain/persons/index.ts'
import { groupId, type GroupState } from '../../domain/groups/index.ts'
import type { GroupStore, PersonLookUp, PersonStore } from '../../ingestion/person-store.ts'
import type { SqlClient } from './sql-client.ts'
import { toPgJson, toPgText } from './sql-text.ts'

const asObject = (v: unknown): Record<string, unknown> => (typeof v === 'string' ? JSON.parse(v) : (v ?? {})) as Record<string, unknown>

/**
 * The ingestion person store over any SqlClient (PGlite embedded, PostgreSQL at scale). Distinct ids
 * are stored as `toPgText` makes them; a look-up answers under the ids it was asked with.
 */
export function createSqlIngestionPersonStore(db: SqlClient): PersonStore {
  return {
    async lookUp(projectId, distinctIds) {
      const asked = new Map<string, string[]>()
      for (const id of distinctIds) {
        const stored = toPgText(id)
        const list = asked.get(stored)
        if (list === undefined) asked.set(stored, [id])
        else if (!list.includes(id)) list.push(id)
      }
      const ids = [...asked.keys()]
      const out: PersonLookUp = { persons: new Map(), personless: new Set() }
      if (ids.length === 0) return out
      const rows = await db.query(
        `SELECT d.distinct_id AS asked, p.uuid::text AS uuid, p.properties, p.is_identified, p.created_at, p.version,
                ARRAY(SELECT d2.distinct_id FROM person_distinct_ids d2 WHERE d2.person_id = p.id ORDER BY d2.distinct_id) AS ids
         FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
         WHERE d.project_id = $1 AND d.distinct_id = ANY($2::text[])`,
        [projectId, ids],
      )
      const byUuid = new Map<string, PersonState>()
      for (const r of rows) {
        let person = byUuid.get(r.uuid)
        if (person === undefined) {
          person = {
            id: r.uuid,
            distinctIds: r.ids as string[],
            properties: asObject(r.properties),
            isIdentified: Boolean(r.is_identified),
            createdAt: new Date(r.created_at),
            version: Number(r.version),
          }
          byUuid.set(r.uuid, person)
        }
        for (const id of asked.get(r.asked) ?? [r.asked]) {
          out.persons.set(id, person)
          if (!person.distinctIds.includes(id)) person.distinctIds.push(id)
        }
      }
      const personless = await db.query(
        'SELECT distinct_id FROM personless_distinct_ids WHERE project_id = $1 AND distinct_id = ANY($2::text[])',
        [projectId, ids],
      )
      for (const r of personless) for (const id of asked.get(r.distinct_id) ?? [r.distinct_id]) out.personless.add(id)
      return out
    },

    async apply(projectId, plan) {
      const moves = new Map<string, string>()
      for (const m of plan.distinctIdMoves) moves.set(toPgText(m.distinctId), m.personId)
      const merged = plan.overrides.filter((o) => plan.deletes.includes(o.oldPersonId))
      const personless = [...new Set(plan.personlessDistinctIds.map(toPgText))]
      if (plan.upserts.length === 0 && moves.size === 0 && plan.deletes.length === 0 && personless.length === 0) return
      await db.inTransaction(async (tx) => {
        if (plan.upserts.length > 0) {
          await tx.query(
            `INSERT INTO persons (uuid, project_id, properties, is_identified, created_at, version)
             SELECT t.uuid, $1, t.properties, t.is_identified, t.created_at, t.version
             FROM unnest($2::uuid[], $3::jsonb[], $4::boolean[], $5::timestamptz[], $6::bigint[])
               AS t(uuid, properties, is_identified, created_at, version)
             ON CONFLICT (uuid) DO UPDATE SET properties = excluded.properties,
               is_identified = excluded.is_identified, version = excluded.version`,
            [
              projectId,
              plan.upserts.map((p) => p.id),
              plan.upserts.map((p) => toPgJson(p.properties)),
              plan.upserts.map((p) => p.isIdentified),
              plan.upserts.map((p) => p.createdAt.toISOString()),
              plan.upserts.map((p) => String(p.version)),
            ],
          )
        }
        if (moves.size > 0) {
          await tx.query(
            `INSERT INTO person_distinct_ids (project_id, distinct_id, person_id)
             SELECT $1, t.distinct_id, p.id FROM unnest($2::text[], $3::uuid[]) AS t(distinct_id, uuid)
             JOIN persons p ON p.uuid = t.uuid
             ON CONFLICT (project_id, distinct_id) DO UPDATE SET person_id = excluded.person_id`,
            [projectId, [...moves.keys()], [...moves.values()]],
          )
        }
        if (plan.deletes.length > 0) {
          const pairs = [merged.map((o) => o.oldPersonId), merged.map((o) => o.overridePersonId)]
          // What hangs off a merged-away person follows it (PostHog moves hash-key overrides and
          // static cohort memberships); the merged-into person keeps its own on a conflict.
          await tx.query(
            `INSERT INTO feature_flag_hash_key_overrides (project_id, person_id, feature_flag_key, hash_key)
             SELECT h.project_id, np.id, h.feature_flag_key, h.hash_key
             FROM unnest($1::uuid[], $2::uuid[]) AS t(old_uuid, new_uuid)
             JOIN persons op ON op.uuid = t.old_uuid JOIN persons np ON np.uuid = t.new_uuid
             JOIN feature_flag_hash_key_overrides h ON h.person_id = op.id
             ON CONFLICT DO NOTHING`,
            pairs,
          )
          await tx.query(
            `INSERT INTO cohort_people (cohort_id, person_id)
             SELECT c.cohort_id, np.id
             FROM unnest($1::uuid[], $2::uuid[]) AS t(old_uuid, new_uuid)
             JOIN persons op ON op.uuid = t.old_uuid JOIN persons np ON np.uuid = t.new_uuid
             JOIN cohort_people c ON c.person_id = op.id
             ON CONFLICT DO NOTHING`,
            pairs,
          )
          await tx.query(
            `WITH gone AS (SELECT id FROM persons WHERE project_id = $1 AND uuid = ANY($2::uuid[])),
             h AS (DELETE FROM feature_flag_hash_key_overrides WHERE person_id IN (SELECT id FROM gone)),
             c AS (DELETE FROM cohort_people WHERE person_id IN (SELECT id FROM gone)),
             d AS (DELETE FROM person_distinct_ids WHERE person_id IN (SELECT id FROM gone))
             SELECT count(*) FROM gone`,
            [projectId, plan.deletes],
          )
          await tx.query('DELETE FROM persons WHERE project_id = $1 AND uuid = ANY($2::uuid[])', [projectId, plan.deletes])
        }
        if (personless.length > 0) {
          await tx.query(
            `INSERT INTO personless_distinct_ids (project_id, distinct_id)
             SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
            [projectId, personless],
          )
        }
      })
    },
  }
}

/** The ingestion group store over any SqlClient: each method is one set-based statement. */
export function createSqlIngestionGroupStore(db: SqlClient): GroupStore {
  return {
    async lookUpGroups(projectId, refs) {
      const out = new Map<string, GroupState>()
      if (refs.length === 0) return out
      const rows = await db.query(
        `SELECT g.group_type_index, g.group_key, g.group_properties, g.created_at FROM groups g
         JOIN unnest($2::int[], $3::text[]) AS r(i, k) ON g.group_type_index = r.i AND g.group_key = r.k
         WHERE g.project_id = $1`,
        [projectId, refs.map((r) => r.typeIndex), refs.map((r) => toPgText(r.key))],
      )
      const byStored = new Map(rows.map((r) => [groupId(Number(r.group_type_index), r.group_key), r]))
      for (const ref of refs) {
        const r = byStored.get(groupId(ref.typeIndex, toPgText(ref.key)))
        if (r === undefined) continue
        out.set(groupId(ref.typeIndex, ref.key), {
          typeIndex: ref.typeIndex, key: ref.key, properties: asObject(r.group_properties), createdAt: new Date(r.created_at), version: 0,
        })
      }
      return out
    },
    async applyGroups(projectId, upserts) {
      const rows = new Map<string, GroupState>()
      for (const g of upserts) rows.set(groupId(g.typeIndex, toPgText(g.key)), g)
      if (rows.size === 0) return
      const list = [...rows.values()]
      await db.query(
        `INSERT INTO groups (project_id, group_type_index, group_key, group_properties, created_at)
         SELECT $1, t.i, t.k, t.p, t.c FROM unnest($2::int[], $3::text[], $4::jsonb[], $5::timestamptz[]) AS t(i, k, p, c)
         ON CONFLICT (project_id, group_type_index, group_key) DO UPDATE
           SET group_properties = excluded.group_properties, created_at = least(groups.created_at, excluded.created_at)`,
        [projectId, list.map((g) => g.typeIndex), list.map((g) => toPgText(g.key)), list.map((g) => toPgJson(g.properties)), list.map((g) => g.createdAt.toISOString())],
      )
    },
  }
}
