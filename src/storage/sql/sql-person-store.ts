import type { PersonStore } from '../../modules/persons/person-store.ts'
import type { Person, PersonListQuery } from '../../modules/persons/person-types.ts'
import type { SqlClient } from './sql-client.ts'
import { isInvalidRegexError, pgParams, propertyFilterSql, type PgParams } from './sql-property-filter.ts'
import { validationError } from '../../shared/errors.ts'
import { toPgText } from './sql-text.ts'

type Row = Record<string, any>

const SELECT = `SELECT p.id, p.uuid::text AS uuid, p.properties, p.is_identified, p.created_at,
    ARRAY(SELECT d.distinct_id FROM person_distinct_ids d WHERE d.person_id = p.id ORDER BY d.distinct_id) AS distinct_ids
  FROM persons p`

// PostgreSQL's own spelling of a UUID; anything else would fail the ::uuid cast of the whole query.
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i

function toPerson(r: Row): Person {
  return {
    id: Number(r.id),
    uuid: r.uuid,
    properties: (typeof r.properties === 'string' ? JSON.parse(r.properties) : r.properties ?? {}) as Record<string, unknown>,
    isIdentified: Boolean(r.is_identified),
    createdAt: new Date(r.created_at),
    distinctIds: (r.distinct_ids ?? []) as string[],
  }
}

/** The WHERE clause of a persons list (alias `p`), `$1` being the project. */
function listWhere(projectId: number, q: PersonListQuery): PgParams & { where: string } {
  const params = pgParams([projectId])
  const where = ['p.project_id = $1']
  if (q.distinctId !== undefined) {
    where.push(`p.id IN (SELECT d.person_id FROM person_distinct_ids d WHERE d.project_id = $1 AND d.distinct_id = ${params.add(toPgText(q.distinctId))})`)
  }
  if (q.email !== undefined) where.push(`p.properties ->> 'email' = ${params.add(toPgText(q.email))}`)
  if (q.search !== undefined) {
    // PostHog's search: the email contains it (any case), or a distinct id is exactly it.
    const search = params.add(toPgText(q.search))
    where.push(`(strpos(lower(COALESCE(p.properties ->> 'email', '')), lower(${search})) > 0
      OR p.id IN (SELECT d.person_id FROM person_distinct_ids d WHERE d.project_id = $1 AND d.distinct_id = ${search}))`)
  }
  for (const f of q.properties) where.push(propertyFilterSql('p.properties', f, params))
  return { ...params, where: where.join(' AND ') }
}

/** A filtered query's rows; a regex PostgreSQL cannot compile is the client's error on `properties`. */
async function filtered<R>(rows: Promise<R[]>): Promise<R[]> {
  try {
    return await rows
  } catch (err) {
    if (isInvalidRegexError(err)) throw validationError('properties', `A regular expression is not valid here: ${(err as Error).message}`)
    throw err
  }
}

/** PersonStore over any SqlClient (PGlite embedded, PostgreSQL at scale). */
export function createSqlPersonStore(db: SqlClient): PersonStore {
  return {
    async list(projectId, query, page) {
      const q = listWhere(projectId, query)
      const limit = q.add(page.limit)
      const offset = q.add(page.offset)
      const rows = await filtered(db.query(`${SELECT} WHERE ${q.where} ORDER BY p.id DESC LIMIT ${limit} OFFSET ${offset}`, q.values))
      return rows.map(toPerson)
    },
    async count(projectId, query) {
      const q = listWhere(projectId, query)
      const [row] = await filtered(db.query<{ n: number }>(`SELECT count(*)::int AS n FROM persons p WHERE ${q.where}`, q.values))
      return Number(row?.n ?? 0)
    },
    async find(projectId, ref) {
      if ('uuid' in ref && !UUID.test(ref.uuid)) return null
      const [row] = 'uuid' in ref
        ? await db.query(`${SELECT} WHERE p.project_id = $1 AND p.uuid = $2::uuid`, [projectId, ref.uuid])
        : await db.query(`${SELECT} WHERE p.project_id = $1 AND p.id = $2::bigint`, [projectId, String(ref.id)])
      return row ? toPerson(row) : null
    },
    async findByUuids(projectId, uuids) {
      const valid = uuids.filter((u) => UUID.test(u))
      if (valid.length === 0) return []
      return (await db.query(`${SELECT} WHERE p.project_id = $1 AND p.uuid = ANY($2::uuid[])`, [projectId, valid])).map(toPerson)
    },
    async findByDistinctIds(projectId, distinctIds) {
      const asked = new Map<string, string[]>()
      for (const id of distinctIds) asked.set(toPgText(id), [...(asked.get(toPgText(id)) ?? []), id])
      const out = new Map<string, Person>()
      if (asked.size === 0) return out
      const rows = await db.query(
        `SELECT q.distinct_id AS asked, x.* FROM person_distinct_ids q
         JOIN LATERAL (${SELECT} WHERE p.id = q.person_id) x ON TRUE
         WHERE q.project_id = $1 AND q.distinct_id = ANY($2::text[])`,
        [projectId, [...asked.keys()]],
      )
      const byId = new Map<number, Person>()
      for (const r of rows) {
        const person = byId.get(Number(r.id)) ?? toPerson(r)
        byId.set(person.id, person)
        for (const id of asked.get(r.asked) ?? [r.asked]) out.set(id, person)
      }
      return out
    },
    async delete(projectId, personId) {
      return db.inTransaction(async (tx) => {
        const [row] = await tx.query(`${SELECT} WHERE p.project_id = $1 AND p.id = $2::bigint FOR UPDATE`, [projectId, String(personId)])
        if (!row) return null
        const id = String(personId)
        await tx.query('DELETE FROM feature_flag_hash_key_overrides WHERE person_id = $1::bigint', [id])
        await tx.query('DELETE FROM cohort_people WHERE person_id = $1::bigint', [id])
        await tx.query('DELETE FROM person_distinct_ids WHERE person_id = $1::bigint', [id])
        await tx.query('DELETE FROM persons WHERE id = $1::bigint', [id])
        const person = toPerson(row)
        return { uuid: person.uuid, distinctIds: person.distinctIds }
      })
    },
    async propertyValues(projectId, key, opts) {
      const params = pgParams([projectId, toPgText(key)])
      const where = ['p.project_id = $1', 'p.properties ? $2', `jsonb_typeof(p.properties -> $2) <> 'null'`]
      if (opts.search) {
        const text = `(CASE jsonb_typeof(p.properties -> $2) WHEN 'string' THEN p.properties ->> $2 ELSE (p.properties -> $2)::text END)`
        where.push(`strpos(lower(${text}), lower(${params.add(toPgText(opts.search))})) > 0`)
      }
      const rows = await db.query(
        `SELECT v::text AS value, count(*)::int AS n FROM (SELECT p.properties -> $2 AS v FROM persons p WHERE ${where.join(' AND ')}) s
         GROUP BY v ORDER BY n DESC, v::text LIMIT ${params.add(opts.limit)}`,
        params.values,
      )
      return rows.map((r) => ({ value: JSON.parse(String(r.value)) as unknown, count: Number(r.n) }))
    },
  }
}
