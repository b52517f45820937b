import type { SqlClient } from './sql-client.ts'

/** Person UUIDs of a static cohort's members, at most `limit` (the caller refuses a cohort past it). */
export async function staticCohortPersonUuids(db: SqlClient, cohortId: number, limit: number): Promise<string[]> {
  const rows = await db.query<{ uuid: string }>(
    `SELECT p.uuid::text AS uuid FROM cohort_people cp JOIN persons p ON p.id = cp.person_id WHERE cp.cohort_id = $1 ORDER BY p.id LIMIT $2`,
    [cohortId, limit],
  )
  return rows.map((r) => r.uuid)
}
