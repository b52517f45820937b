import type { DestinationStore } from '../../modules/notifications/destination-store.ts'
import type { Destination, DestinationInput } from '../../modules/notifications/destination-types.ts'
import type { SqlClient } from './sql-client.ts'
import { refuseNul, toPgJson } from './sql-text.ts'
import { setClause, SqlExpr } from './sql-set-clause.ts'
import { selectPage } from './sql-page.ts'

function toDestination(r: Record<string, any>): Destination {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    url: r.url,
    enabled: r.enabled,
    headers: r.headers ?? {},
    filters: r.filters ?? {},
    bodyTemplate: r.body_template,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  }
}

function columns(input: DestinationInput): Record<string, unknown> {
  refuseNul({ name: input.name, url: input.url, headers: input.headers, filters: input.filters, body_template: input.bodyTemplate })
  return {
    name: input.name,
    url: input.url,
    enabled: input.enabled,
    headers: input.headers === undefined ? undefined : toPgJson(input.headers),
    filters: input.filters === undefined ? undefined : toPgJson(input.filters),
    body_template: input.bodyTemplate,
    deleted: input.deleted,
  }
}

/** DestinationStore over any SqlClient. */
export function createSqlDestinationStore(db: SqlClient): DestinationStore {
  return {
    list: (projectId, page) =>
      selectPage(db, { from: 'destinations', select: 'SELECT * FROM destinations', where: 'project_id = $1 AND NOT deleted', params: [projectId], orderBy: 'id', page, map: toDestination }),
    async find(projectId, id) {
      const [row] = await db.query('SELECT * FROM destinations WHERE project_id = $1 AND id = $2 AND NOT deleted', [projectId, id])
      return row ? toDestination(row) : null
    },
    async insert(projectId, input) {
      const c = columns(input)
      const [row] = await db.query(
        `INSERT INTO destinations (project_id, name, url, enabled, headers, filters, body_template) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
        [projectId, c.name, c.url, c.enabled, c.headers, c.filters, c.body_template],
      )
      return toDestination(row!)
    },
    async update(projectId, id, input) {
      // `body_template: null` is a value to store (back to the default), so it is kept apart from "not given".
      const c = columns(input)
      const set = setClause({ ...c, body_template: undefined, updated_at: new SqlExpr('now()') }, 2)
      const template = input.bodyTemplate === undefined ? '' : `, body_template = $${set.params.length + 3}`
      const params = [projectId, id, ...set.params, ...(input.bodyTemplate === undefined ? [] : [input.bodyTemplate])]
      const [row] = await db.query(`UPDATE destinations SET ${set.sql}${template} WHERE project_id = $1 AND id = $2 AND NOT deleted RETURNING *`, params)
      return row ? toDestination(row) : null
    },
  }
}
