import type { CohortStore } from '../../modules/cohorts/cohort-store.ts'
import type { Cohort, CohortWrite } from '../../modules/cohorts/cohort-types.ts'
import type { SqlClient } from './sql-client.ts'
import { refuseNul, toPgJson } from './sql-text.ts'
import { toUserRef, userRefColumns } from './sql-user-ref.ts'
import { selectPage } from './sql-page.ts'

const SELECT = `SELECT c.*, ${userRefColumns('u')},
    CASE WHEN c.is_static THEN (SELECT count(*)::int FROM cohort_people p WHERE p.cohort_id = c.id) END AS people
  FROM cohorts c LEFT JOIN users u ON u.id = c.created_by`

type Row = Record<string, any>

function toCohort(r: Row): Cohort {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    description: r.description,
    filters: r.filters ?? null,
    groups: r.groups ?? [],
    isStatic: r.is_static,
    deleted: r.deleted,
    version: r.version,
    count: r.people ?? null,
    createdBy: toUserRef(r),
    createdAt: new Date(r.created_at),
    lastCalculation: r.last_calculation ? new Date(r.last_calculation) : null,
  }
}

function writeParams(c: CohortWrite): unknown[] {
  refuseNul({ name: c.name, description: c.description, filters: c.filters, groups: c.groups })
  return [c.name, c.description, c.filters === null ? null : toPgJson(c.filters), toPgJson(c.groups), c.isStatic, c.deleted]
}

/** CohortStore over any SqlClient. */
export function createSqlCohortStore(db: SqlClient): CohortStore {
  async function byId(q: SqlClient, projectId: number, id: number): Promise<Cohort | null> {
    const [row] = await q.query(`${SELECT} WHERE c.project_id = $1 AND c.id = $2`, [projectId, id])
    return row ? toCohort(row) : null
  }
  return {
    async listLive(projectId) {
      return (await db.query(`${SELECT} WHERE c.project_id = $1 AND NOT c.deleted ORDER BY c.id DESC`, [projectId])).map(toCohort)
    },
    list: (projectId, page) =>
      selectPage(db, { from: 'cohorts c', select: SELECT, where: 'c.project_id = $1 AND NOT c.deleted', params: [projectId], orderBy: 'c.id DESC', page, map: toCohort }),
    get: (projectId, id) => byId(db, projectId, id),
    async insert({ projectId, userId, cohort }) {
      const [row] = await db.query<{ id: number }>(
        `INSERT INTO cohorts (name, description, filters, groups, is_static, deleted, project_id, created_by, last_calculation)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now()) RETURNING id`,
        [...writeParams(cohort), projectId, userId],
      )
      return (await byId(db, projectId, row.id))!
    },
    async update({ projectId, id, cohort }) {
      await db.query(
        `UPDATE cohorts SET name = $1, description = $2, filters = $3, groups = $4, is_static = $5, deleted = $6,
           version = version + 1, last_calculation = now() WHERE project_id = $7 AND id = $8`,
        [...writeParams(cohort), projectId, id],
      )
      return (await byId(db, projectId, id))!
    },
    async addMembers(cohortId, personIds) {
      if (personIds.length === 0) return
      await db.query(
        `INSERT INTO cohort_people (cohort_id, person_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING`,
        [cohortId, personIds],
      )
    },
  }
}
