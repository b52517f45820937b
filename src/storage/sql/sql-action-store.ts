import type { ActionStore } from '../../modules/actions/action-store.ts'
import type { Action, ActionInput } from '../../modules/actions/action-types.ts'
import type { SqlClient } from './sql-client.ts'
import { cannotBeStored, refuseNul, toPgJson } from './sql-text.ts'
import { toUserRef, userRefColumns } from './sql-user-ref.ts'
import { setClause, SqlExpr } from './sql-set-clause.ts'
import { selectPage } from './sql-page.ts'

const ACTION_SELECT = `SELECT a.*, ${userRefColumns('u')} FROM actions a LEFT JOIN users u ON u.id = a.created_by`

function toAction(r: Record<string, any>): Action {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    description: r.description,
    tags: r.tags ?? [],
    postToChat: r.post_to_slack,
    chatMessageFormat: r.slack_message_format,
    steps: r.steps ?? [],
    deleted: r.deleted,
    isCalculating: r.is_calculating,
    lastCalculatedAt: new Date(r.last_calculated_at),
    pinnedAt: r.pinned_at ? new Date(r.pinned_at) : null,
    createdBy: toUserRef(r),
    createdAt: new Date(r.created_at),
  }
}

/** Column values of an input, `undefined` for fields not given. `pinned_at` keeps an existing pin. */
function columns(input: ActionInput): Record<string, unknown> {
  refuseNul({ name: input.name, description: input.description, tags: input.tags, slack_message_format: input.chatMessageFormat, steps: input.steps })
  return {
    name: input.name,
    description: input.description,
    tags: input.tags === undefined ? undefined : toPgJson(input.tags),
    post_to_slack: input.postToChat,
    slack_message_format: input.chatMessageFormat,
    steps: input.steps === undefined ? undefined : toPgJson(input.steps),
    deleted: input.deleted,
    last_calculated_at: input.lastCalculatedAt?.toISOString(),
  }
}

/** ActionStore over any SqlClient. Steps live in the action's `steps` JSONB column, ids included. */
export function createSqlActionStore(db: SqlClient): ActionStore {
  return {
    inTransaction: (fn) => db.inTransaction((tx) => fn(createSqlActionStore(tx))),
    list: (projectId, page) =>
      selectPage(db, {
        from: 'actions a',
        select: ACTION_SELECT,
        where: 'a.project_id = $1 AND NOT a.deleted',
        params: [projectId],
        orderBy: 'a.last_calculated_at DESC, a.name ASC, a.id DESC',
        page,
        map: toAction,
      }),
    async find(projectId, id) {
      const [row] = await db.query(`${ACTION_SELECT} WHERE a.project_id = $1 AND a.id = $2`, [projectId, id])
      return row ? toAction(row) : null
    },
    async findLiveByName(projectId, name, exceptId) {
      if (cannotBeStored(name)) return null
      // Names are unique among live actions without an index (PostHog's rule lives in its serializer):
      // inside the service's transaction this lock holds other check-then-write transactions of the
      // project until commit, so two concurrent creates cannot both find the name free. Outside a
      // transaction it is released at once.
      await db.query('SELECT pg_advisory_xact_lock(727002, $1)', [projectId])
      const [row] = await db.query<{ id: number }>(
        'SELECT id FROM actions WHERE project_id = $1 AND name = $2 AND NOT deleted AND id <> $3 ORDER BY id LIMIT 1',
        [projectId, name, exceptId ?? 0],
      )
      return row ? row.id : null
    },
    async insert(input) {
      const cols = Object.entries({ ...columns(input), project_id: input.projectId, created_by: input.createdBy }).filter(([, v]) => v !== undefined)
      const names = cols.map(([k]) => k)
      const values = cols.map(([, v]) => v)
      if (input.pinnedAt) names.push('pinned_at')
      const placeholders = values.map((_, i) => `$${i + 1}`)
      if (input.pinnedAt) placeholders.push('now()')
      const [row] = await db.query<{ id: number }>(
        `INSERT INTO actions (${names.join(', ')}) VALUES (${placeholders.join(', ')}) RETURNING id`,
        values,
      )
      return row.id
    },
    async update(projectId, id, input) {
      const pinnedAt = input.pinnedAt === null ? null : input.pinnedAt ? new SqlExpr('coalesce(pinned_at, now())') : undefined
      const set = setClause({ ...columns(input), updated_at: new SqlExpr('now()'), pinned_at: pinnedAt }, 2)
      await db.query(`UPDATE actions SET ${set.sql} WHERE project_id = $1 AND id = $2`, [projectId, id, ...set.params])
    },
  }
}
