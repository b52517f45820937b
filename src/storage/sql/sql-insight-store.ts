import { randomBytes } from 'node:crypto'
import type { InsightStore } from '../../modules/insights/insight-store.ts'
import type { Insight, InsightInput } from '../../modules/insights/insight-types.ts'
import type { SqlClient } from './sql-client.ts'
import { refuseNul, toPgJson } from './sql-text.ts'
import { toUserRef, userRefColumns } from './sql-user-ref.ts'
import { setClause, SqlExpr } from './sql-set-clause.ts'
import { selectPage } from './sql-page.ts'

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

/** PostHog's insight short id: 8 random alphanumerics. */
function newShortId(): string {
  return [...randomBytes(8)].map((b) => ALPHABET[b % ALPHABET.length]).join('')
}

/** An insight's live placements: its non-deleted tiles on non-deleted dashboards. */
export const PLACEMENTS_SQL = `(SELECT coalesce(json_agg(json_build_object('tileId', t.id, 'dashboardId', t.dashboard_id) ORDER BY t.id), '[]'::json)
  FROM dashboard_tiles t JOIN dashboards d ON d.id = t.dashboard_id
  WHERE t.insight_id = i.id AND NOT t.deleted AND NOT d.deleted)`

/** Select list and FROM for insights (alias `i`) with their creator and placements. */
export const INSIGHT_SELECT = `SELECT i.*, ${userRefColumns('u')}, ${PLACEMENTS_SQL} AS placements
  FROM insights i LEFT JOIN users u ON u.id = i.created_by`

export function toInsight(r: Record<string, any>, prefix = ''): Insight {
  return {
    id: r[`${prefix}id`],
    shortId: r[`${prefix}short_id`],
    projectId: r[`${prefix}project_id`],
    name: r[`${prefix}name`],
    description: r[`${prefix}description`],
    query: r[`${prefix}query`] ?? null,
    filters: r[`${prefix}filters`] ?? {},
    deleted: r[`${prefix}deleted`],
    createdBy: toUserRef(r, `${prefix}cb_`),
    createdAt: new Date(r[`${prefix}created_at`]),
    updatedAt: new Date(r[`${prefix}updated_at`]),
    placements: r[`${prefix}placements`] ?? [],
    cache: r[`${prefix}cached_result`] && r[`${prefix}cache_key`]
      ? { key: r[`${prefix}cache_key`], response: r[`${prefix}cached_result`], computedAt: new Date(r[`${prefix}cached_at`]) }
      : null,
  }
}

/** Inserts one insight row; shared with the dashboard store (templates and deep copies create insights). */
export async function insertInsightRow(q: SqlClient, input: InsightInput & { projectId: number; createdBy: number | null }): Promise<number> {
  refuseNulInInsight(input)
  const [row] = await q.query<{ id: number }>(
    `INSERT INTO insights (project_id, short_id, name, description, query, filters, deleted, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
    [
      input.projectId,
      newShortId(),
      input.name ?? null,
      input.description ?? '',
      input.query === undefined || input.query === null ? null : toPgJson(input.query),
      toPgJson(input.filters ?? {}),
      input.deleted ?? false,
      input.createdBy,
    ],
  )
  return row.id
}

function refuseNulInInsight(input: InsightInput): void {
  refuseNul({ name: input.name, description: input.description, query: input.query, filters: input.filters })
}

/** InsightStore over any SqlClient. */
export function createSqlInsightStore(db: SqlClient): InsightStore {
  return {
    inTransaction: (fn) => db.inTransaction((tx) => fn(createSqlInsightStore(tx))),
    list: (projectId, page) =>
      selectPage(db, {
        from: 'insights i',
        select: INSIGHT_SELECT,
        where: 'i.project_id = $1 AND NOT i.deleted',
        params: [projectId],
        orderBy: 'i.updated_at DESC, i.id DESC',
        page,
        map: (r) => toInsight(r),
      }),
    async find(projectId, id, opts = {}) {
      const [row] = await db.query(
        `${INSIGHT_SELECT} WHERE i.project_id = $1 AND i.id = $2 ${opts.includeDeleted ? '' : 'AND NOT i.deleted'}`,
        [projectId, id],
      )
      return row ? toInsight(row) : null
    },
    insert: (input) => insertInsightRow(db, input),
    async update(projectId, id, input) {
      refuseNulInInsight(input)
      const set = setClause(
        {
          updated_at: new SqlExpr('now()'),
          name: input.name,
          description: input.description,
          query: input.query === undefined ? undefined : input.query === null ? null : toPgJson(input.query),
          filters: input.filters === undefined ? undefined : toPgJson(input.filters),
          deleted: input.deleted,
          // A new query makes the cached result an answer to another question.
          ...(input.query === undefined ? {} : { cached_result: null, cached_at: null, cache_key: null }),
        },
        2,
      )
      await db.query(`UPDATE insights SET ${set.sql} WHERE project_id = $1 AND id = $2`, [projectId, id, ...set.params])
    },
    async saveResult(projectId, id, cache) {
      await db.query('UPDATE insights SET cached_result = $1, cached_at = $2, cache_key = $3 WHERE project_id = $4 AND id = $5', [
        toPgJson(cache.response),
        cache.computedAt.toISOString(),
        cache.key,
        projectId,
        id,
      ])
    },
    async findDashboards(projectId, ids) {
      if (ids.length === 0) return []
      return db.query('SELECT id, deleted FROM dashboards WHERE project_id = $1 AND id = ANY($2::int[])', [projectId, ids])
    },
    async setDashboards(insightId, dashboardIds) {
      await db.query('UPDATE dashboard_tiles SET deleted = true WHERE insight_id = $1 AND NOT (dashboard_id = ANY($2::int[]))', [
        insightId,
        dashboardIds,
      ])
      await db.query('UPDATE dashboard_tiles SET deleted = false WHERE insight_id = $1 AND dashboard_id = ANY($2::int[])', [
        insightId,
        dashboardIds,
      ])
      await db.query(
        `INSERT INTO dashboard_tiles (dashboard_id, insight_id)
         SELECT d, $1 FROM unnest($2::int[]) AS d
         WHERE NOT EXISTS (SELECT 1 FROM dashboard_tiles t WHERE t.insight_id = $1 AND t.dashboard_id = d)`,
        [insightId, dashboardIds],
      )
    },
  }
}
