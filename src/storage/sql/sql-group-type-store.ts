import type { GroupType, GroupTypeStore } from '../../modules/group-types/group-type-store.ts'
import type { SqlClient } from './sql-client.ts'
import { refuseNul, toPgText } from './sql-text.ts'

function toGroupType(r: Record<string, any>): GroupType {
  return { groupType: r.group_type, groupTypeIndex: r.group_type_index, nameSingular: r.name_singular, namePlural: r.name_plural }
}

/** GroupTypeStore over any SqlClient. */
export function createSqlGroupTypeStore(db: SqlClient): GroupTypeStore {
  const list = async (projectId: number) =>
    (await db.query('SELECT * FROM group_type_mappings WHERE project_id = $1 ORDER BY group_type_index', [projectId])).map(toGroupType)
  return {
    list,
    async insertMissing(projectId, names) {
      // Names come from events' `$groups`: stored as ingestion stores text (U+0000 as U+FFFD), never refused.
      for (const name of new Set(names.map(toPgText))) {
        // Lowest free index; a concurrent writer taking the same index makes this insert a no-op, so retry.
        for (let attempt = 0; attempt < 5; attempt++) {
          const rows = await db.query(
            `INSERT INTO group_type_mappings (project_id, group_type, group_type_index)
             SELECT $1, $2, min(i) FROM generate_series(0, 4) i
             WHERE i NOT IN (SELECT group_type_index FROM group_type_mappings WHERE project_id = $1)
             HAVING min(i) IS NOT NULL
             ON CONFLICT DO NOTHING RETURNING group_type`,
            [projectId, name],
          )
          if (rows.length > 0) break
          const [exists] = await db.query(
            'SELECT count(*) FILTER (WHERE group_type = $2)::int AS mine, count(*)::int AS total FROM group_type_mappings WHERE project_id = $1',
            [projectId, name],
          )
          if (exists.mine > 0 || exists.total >= 5) break
        }
      }
      return list(projectId)
    },
    async updateNames(projectId, index, names) {
      refuseNul({ name_singular: names.nameSingular, name_plural: names.namePlural })
      await db.query('UPDATE group_type_mappings SET name_singular = $3, name_plural = $4 WHERE project_id = $1 AND group_type_index = $2', [
        projectId,
        index,
        names.nameSingular,
        names.namePlural,
      ])
    },
  }
}
