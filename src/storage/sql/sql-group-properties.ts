import type { SqlClient } from './sql-client.ts'

/**
 * Each group of the type that has the property, with its value as text (JSON text for non-strings,
 * as events' properties read), at most `limit` rows: what a group-property breakdown looks up.
 */
export async function groupPropertyValues(db: SqlClient, projectId: number, typeIndex: number, key: string, limit: number): Promise<Array<[string, string]>> {
  const rows = await db.query<{ group_key: string; value: string }>(
    `SELECT group_key, group_properties->>$3 AS value FROM groups
     WHERE project_id = $1 AND group_type_index = $2 AND group_properties ? $3 AND group_properties->>$3 IS NOT NULL
     ORDER BY group_key LIMIT $4`,
    [projectId, typeIndex, key, limit],
  )
  return rows.map((r) => [r.group_key, r.value])
}
