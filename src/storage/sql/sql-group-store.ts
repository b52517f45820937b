import type { GroupStore } from '../../modules/groups/group-store.ts'
import type { Group } from '../../modules/groups/group-types.ts'
import type { SqlClient } from './sql-client.ts'
import { pgParams } from './sql-property-filter.ts'
import { toPgText } from './sql-text.ts'

type Row = Record<string, any>

const SELECT = `SELECT g.group_type_index, g.group_key, g.group_properties, g.created_at,
    (extract(epoch FROM g.created_at) * 1000000)::bigint::text AS created_us
  FROM groups g`

function toGroup(r: Row): Group {
  return {
    typeIndex: Number(r.group_type_index),
    key: r.group_key,
    properties: (typeof r.group_properties === 'string' ? JSON.parse(r.group_properties) : r.group_properties ?? {}) as Record<string, unknown>,
    createdAt: new Date(r.created_at),
    createdAtMicros: String(r.created_us),
  }
}

/** GroupStore over any SqlClient; the list is a keyset page on (created_at µs, key), newest first. */
export function createSqlGroupStore(db: SqlClient): GroupStore {
  return {
    async list(projectId, q) {
      const params = pgParams([projectId, q.typeIndex])
      const where = ['g.project_id = $1', 'g.group_type_index = $2']
      if (q.search !== undefined) {
        const s = params.add(toPgText(q.search))
        where.push(`(strpos(lower(g.group_key), lower(${s})) > 0 OR strpos(lower(COALESCE(g.group_properties ->> 'name', '')), lower(${s})) > 0)`)
      }
      if (q.keyContains !== undefined) where.push(`strpos(lower(g.group_key), lower(${params.add(toPgText(q.keyContains))})) > 0`)
      const micros = `(extract(epoch FROM g.created_at) * 1000000)::bigint`
      if (q.after) where.push(`(${micros}, g.group_key) < (${params.add(q.after.createdAtMicros)}::bigint, ${params.add(q.after.key)})`)
      const rows = await db.query(
        `${SELECT} WHERE ${where.join(' AND ')} ORDER BY ${micros} DESC, g.group_key DESC LIMIT ${params.add(q.limit)}`,
        params.values,
      )
      return rows.map(toGroup)
    },
    async find(projectId, typeIndex, key) {
      const [row] = await db.query(`${SELECT} WHERE g.project_id = $1 AND g.group_type_index = $2 AND g.group_key = $3`, [projectId, typeIndex, toPgText(key)])
      return row ? toGroup(row) : null
    },
    async findByKeys(projectId, typeIndex, keys) {
      // Keys are stored as PostgreSQL text (toPgText); the answer names each group by the key asked.
      const asked = [...new Set(keys)]
      if (asked.length === 0) return []
      const rows = await db.query(`${SELECT} WHERE g.project_id = $1 AND g.group_type_index = $2 AND g.group_key = ANY($3::text[])`, [projectId, typeIndex, [...new Set(asked.map(toPgText))]])
      const byStored = new Map(rows.map((r) => [r.group_key as string, toGroup(r)]))
      return asked.flatMap((key) => {
        const g = byStored.get(toPgText(key))
        return g ? [{ ...g, key }] : []
      })
    },
  }
}
