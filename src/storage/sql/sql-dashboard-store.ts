import type { DashboardStore } from '../../modules/dashboards/dashboard-store.ts'
import type { Dashboard, DashboardInput, Tile } from '../../modules/dashboards/dashboard-types.ts'
import type { SqlClient } from './sql-client.ts'
import { refuseNul, toPgJson } from './sql-text.ts'
import { INSIGHT_SELECT, insertInsightRow, toInsight } from './sql-insight-store.ts'
import { toUserRef, userRefColumns } from './sql-user-ref.ts'
import { setClause } from './sql-set-clause.ts'
import { selectPage } from './sql-page.ts'

const DASHBOARD_SELECT = `SELECT d.*, ${userRefColumns('u')} FROM dashboards d LEFT JOIN users u ON u.id = d.created_by`

function toDashboard(r: Record<string, any>): Dashboard {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    description: r.description,
    pinned: r.pinned,
    deleted: r.deleted,
    creationMode: r.creation_mode,
    filters: r.filters ?? {},
    variables: r.variables ?? {},
    tags: r.tags ?? [],
    restrictionLevel: r.restriction_level,
    createdBy: toUserRef(r),
    createdAt: new Date(r.created_at),
    lastAccessedAt: r.last_accessed_at ? new Date(r.last_accessed_at) : null,
  }
}

const json = (v: unknown) => (v === undefined || v === null ? null : toPgJson(v))


function refuseNulInDashboard(input: DashboardInput): void {
  refuseNul({ name: input.name, description: input.description, filters: input.filters, tags: input.tags })
}

/** DashboardStore over any SqlClient. */
export function createSqlDashboardStore(db: SqlClient): DashboardStore {
  return {
    inTransaction: (fn) => db.inTransaction((tx) => fn(createSqlDashboardStore(tx))),
    list: (projectId, page) =>
      selectPage(db, {
        from: 'dashboards d',
        select: DASHBOARD_SELECT,
        where: 'd.project_id = $1 AND NOT d.deleted',
        params: [projectId],
        orderBy: 'd.pinned DESC, d.name ASC, d.id ASC',
        page,
        map: toDashboard,
      }),
    async find(projectId, id, opts = {}) {
      const [row] = await db.query(`${DASHBOARD_SELECT} WHERE d.project_id = $1 AND d.id = $2 ${opts.includeDeleted ? '' : 'AND NOT d.deleted'}`, [
        projectId,
        id,
      ])
      return row ? toDashboard(row) : null
    },
    async insert(input) {
      refuseNulInDashboard(input)
      const [row] = await db.query<{ id: number }>(
        `INSERT INTO dashboards (project_id, name, description, pinned, deleted, creation_mode, filters, tags, restriction_level, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
        [
          input.projectId,
          input.name ?? null,
          input.description ?? '',
          input.pinned ?? false,
          input.deleted ?? false,
          input.creationMode,
          toPgJson(input.filters ?? {}),
          toPgJson(input.tags ?? []),
          input.restrictionLevel ?? 21,
          input.createdBy,
        ],
      )
      return row.id
    },
    async update(projectId, id, input) {
      refuseNulInDashboard(input)
      const set = setClause(
        {
          name: input.name,
          description: input.description,
          pinned: input.pinned,
          deleted: input.deleted,
          filters: input.filters === undefined ? undefined : toPgJson(input.filters),
          tags: input.tags === undefined ? undefined : toPgJson(input.tags),
          restriction_level: input.restrictionLevel,
        },
        2,
      )
      if (set.params.length === 0) return
      await db.query(`UPDATE dashboards SET ${set.sql} WHERE project_id = $1 AND id = $2`, [projectId, id, ...set.params])
    },
    async touch(id) {
      await db.query('UPDATE dashboards SET last_accessed_at = now() WHERE id = $1', [id])
    },
    async tiles(dashboardId) {
      const rows = await db.query(
        `SELECT t.*, x.body AS text_body, x.project_id AS text_project_id, x.last_modified_at AS text_last_modified_at, ${userRefColumns('u')}
         FROM dashboard_tiles t LEFT JOIN insights i ON i.id = t.insight_id
           LEFT JOIN dashboard_texts x ON x.id = t.text_id LEFT JOIN users u ON u.id = x.created_by
         WHERE t.dashboard_id = $1 AND NOT t.deleted AND (i.id IS NULL OR NOT i.deleted) ORDER BY t.id`,
        [dashboardId],
      )
      const insightIds = rows.map((r) => r.insight_id).filter((x) => x !== null)
      const insights = insightIds.length ? (await db.query(`${INSIGHT_SELECT} WHERE i.id = ANY($1::int[])`, [insightIds])).map((r) => toInsight(r)) : []
      return rows.map(
        (r): Tile => ({
          id: r.id,
          dashboardId: r.dashboard_id,
          insight: insights.find((i) => i.id === r.insight_id) ?? null,
          text:
            r.text_id === null
              ? null
              : { id: r.text_id, body: r.text_body, createdBy: toUserRef(r), lastModifiedAt: new Date(r.text_last_modified_at), projectId: r.text_project_id },
          layouts: r.layouts ?? {},
          color: r.color,
          filtersOverrides: r.filters_overrides,
          deleted: r.deleted,
        }),
      )
    },
    async findTile(dashboardId, tileId) {
      const [row] = await db.query('SELECT id, insight_id, text_id, deleted FROM dashboard_tiles WHERE dashboard_id = $1 AND id = $2', [
        dashboardId,
        tileId,
      ])
      return row ? { id: row.id, insightId: row.insight_id, textId: row.text_id, deleted: row.deleted } : null
    },
    async insertTile(tile) {
      refuseNul({ layouts: tile.layouts, color: tile.color, filters_overrides: tile.filtersOverrides })
      const [row] = await db.query<{ id: number }>(
        `INSERT INTO dashboard_tiles (dashboard_id, insight_id, text_id, layouts, color, filters_overrides)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
        [tile.dashboardId, tile.insightId ?? null, tile.textId ?? null, toPgJson(tile.layouts ?? {}), tile.color ?? null, json(tile.filtersOverrides)],
      )
      return row.id
    },
    async updateTile(tileId, patch) {
      refuseNul({ layouts: patch.layouts, color: patch.color, filters_overrides: patch.filtersOverrides })
      const set = setClause(
        {
          layouts: patch.layouts === undefined ? undefined : toPgJson(patch.layouts),
          color: patch.color,
          deleted: patch.deleted,
          filters_overrides: patch.filtersOverrides === undefined ? undefined : json(patch.filtersOverrides),
        },
        1,
      )
      if (set.params.length === 0) return
      await db.query(`UPDATE dashboard_tiles SET ${set.sql} WHERE id = $1`, [tileId, ...set.params])
    },
    async moveTile(tileId, toDashboardId) {
      await db.query('UPDATE dashboard_tiles SET dashboard_id = $2 WHERE id = $1', [tileId, toDashboardId])
    },
    async insertText(input) {
      refuseNul({ body: input.body })
      const [row] = await db.query<{ id: number }>('INSERT INTO dashboard_texts (project_id, body, created_by) VALUES ($1, $2, $3) RETURNING id', [
        input.projectId,
        input.body,
        input.createdBy,
      ])
      return row.id
    },
    async updateText(textId, body) {
      refuseNul({ body })
      await db.query('UPDATE dashboard_texts SET body = $2, last_modified_at = now() WHERE id = $1', [textId, body])
    },
    insertInsight: (input) => insertInsightRow(db, input),
    async setTilesDeleted(dashboardId, deleted) {
      await db.query('UPDATE dashboard_tiles SET deleted = $2 WHERE dashboard_id = $1', [dashboardId, deleted])
    },
    async insightsOnlyOn(dashboardId) {
      const rows = await db.query<{ id: number }>(
        `SELECT DISTINCT t.insight_id AS id FROM dashboard_tiles t WHERE t.dashboard_id = $1 AND t.insight_id IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM dashboard_tiles o JOIN dashboards d ON d.id = o.dashboard_id
             WHERE o.insight_id = t.insight_id AND o.dashboard_id <> $1 AND NOT o.deleted AND NOT d.deleted)`,
        [dashboardId],
      )
      return rows.map((r) => r.id)
    },
    async insightsOn(dashboardId) {
      const rows = await db.query<{ id: number }>('SELECT DISTINCT insight_id AS id FROM dashboard_tiles WHERE dashboard_id = $1 AND insight_id IS NOT NULL', [
        dashboardId,
      ])
      return rows.map((r) => r.id)
    },
    async setInsightsDeleted(insightIds, deleted) {
      if (insightIds.length === 0) return
      await db.query('UPDATE insights SET deleted = $2, updated_at = now() WHERE id = ANY($1::int[])', [insightIds, deleted])
    },
    async memberLevel(projectId, userId) {
      const [row] = await db.query<{ level: number }>('SELECT level FROM project_members WHERE project_id = $1 AND user_id = $2', [projectId, userId])
      return row ? row.level : null
    },
  }
}
