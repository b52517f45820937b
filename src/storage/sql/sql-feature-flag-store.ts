import type { FeatureFlagStore, FlagListQuery } from '../../modules/feature-flags/feature-flag-store.ts'
import type { FeatureFlag, FeatureFlagWrite } from '../../modules/feature-flags/feature-flag-types.ts'
import { validationError } from '../../shared/errors.ts'
import type { SqlClient } from './sql-client.ts'
import { cannotBeStored, refuseNul, toPgJson } from './sql-text.ts'
import { toUserRef, userRefColumns } from './sql-user-ref.ts'
import { selectPage } from './sql-page.ts'
import { lookupTable } from '../../shared/lookup-table.ts'

const SELECT = `SELECT f.*, ${userRefColumns('c')}, ${userRefColumns('m', 'lm_')}
  FROM feature_flags f LEFT JOIN users c ON c.id = f.created_by LEFT JOIN users m ON m.id = f.last_modified_by`

type Row = Record<string, any>

function toFlag(r: Row): FeatureFlag {
  return {
    id: r.id,
    projectId: r.project_id,
    key: r.key,
    name: r.name,
    filters: r.filters ?? {},
    rolloutPercentage: r.rollout_percentage,
    active: r.active,
    deleted: r.deleted,
    ensureExperienceContinuity: r.ensure_experience_continuity,
    tags: r.tags ?? [],
    evaluationRuntime: r.evaluation_runtime,
    version: r.version,
    createdBy: toUserRef(r),
    lastModifiedBy: toUserRef(r, 'lm_'),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  }
}

function writeParams(f: FeatureFlagWrite): unknown[] {
  refuseNul({ key: f.key, name: f.name, filters: f.filters, tags: f.tags, evaluation_runtime: f.evaluationRuntime })
  return [f.key, f.name, toPgJson(f.filters), f.active, f.deleted, f.ensureExperienceContinuity, toPgJson(f.tags), f.evaluationRuntime]
}

const ORDER_COLUMNS = lookupTable({ key: 'f.key', name: 'f.name', created_at: 'f.created_at', updated_at: 'f.updated_at' })
const VARIANTS = `(CASE WHEN jsonb_typeof(f.filters->'multivariate'->'variants') = 'array'
  THEN jsonb_array_length(f.filters->'multivariate'->'variants') ELSE 0 END)`

/** The WHERE clause and parameters of a list query (values always as parameters). */
function listWhere(projectId: number, q: FlagListQuery): { where: string; params: unknown[] } {
  const params: unknown[] = [projectId]
  const where = ['f.project_id = $1', 'NOT f.deleted']
  const param = (v: unknown) => `$${params.push(v)}`
  if (q.active !== undefined) where.push(`f.active = ${param(q.active)}`)
  if (q.createdById !== undefined) where.push(`f.created_by = ${param(q.createdById)}`)
  if (q.evaluationRuntime) where.push(`f.evaluation_runtime = ${param(q.evaluationRuntime)}`)
  if (q.search && cannotBeStored(q.search)) where.push('false')
  else if (q.search) {
    const pattern = param(`%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)
    where.push(`(f.key ILIKE ${pattern} OR f.name ILIKE ${pattern})`)
  }
  if (q.type === 'boolean') where.push(`${VARIANTS} = 0`)
  if (q.type === 'multivariant') where.push(`${VARIANTS} > 0`)
  if (q.type === 'experiment' || q.type === 'remote_config') where.push('false')
  return { where: where.join(' AND '), params }
}

function orderBy(order: string | undefined): string {
  const desc = order?.startsWith('-') ?? true
  const column = (order && ORDER_COLUMNS[order.replace(/^-/, '')]) || 'f.created_at'
  return `${column} ${desc ? 'DESC' : 'ASC'}, f.id ${desc ? 'DESC' : 'ASC'}`
}

/**
 * A live key taken meanwhile (the partial unique index, a concurrent writer) is the same 400 the
 * service gives when it sees the key taken, not a driver error.
 */
async function keyUnique<T>(write: Promise<T>): Promise<T> {
  try {
    return await write
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw validationError('key', 'There is already a feature flag with this key.', 'unique')
    throw err
  }
}

/** FeatureFlagStore over any SqlClient (PGlite embedded, PostgreSQL at scale). */
export function createSqlFeatureFlagStore(db: SqlClient): FeatureFlagStore {
  async function byId(q: SqlClient, projectId: number, id: number): Promise<FeatureFlag | null> {
    const [row] = await q.query(`${SELECT} WHERE f.project_id = $1 AND f.id = $2`, [projectId, id])
    return row ? toFlag(row) : null
  }
  return {
    async listLive(projectId) {
      const rows = await db.query(`${SELECT} WHERE f.project_id = $1 AND NOT f.deleted ORDER BY f.created_at DESC, f.id DESC`, [projectId])
      return rows.map(toFlag)
    },
    list(projectId, query, page) {
      const { where, params } = listWhere(projectId, query)
      return selectPage(db, { from: 'feature_flags f', select: SELECT, where, params, orderBy: orderBy(query.order), page, map: toFlag })
    },
    get: (projectId, id) => byId(db, projectId, id),
    async keyExists(projectId, key, exceptId) {
      if (cannotBeStored(key)) return false
      const rows = await db.query('SELECT 1 FROM feature_flags WHERE project_id = $1 AND key = $2 AND NOT deleted AND id <> $3', [
        projectId,
        key,
        exceptId ?? -1,
      ])
      return rows.length > 0
    },
    async insert({ projectId, userId, flag }) {
      return keyUnique(db.inTransaction(async (tx) => {
        await tx.query('DELETE FROM feature_flags WHERE project_id = $1 AND key = $2 AND deleted', [projectId, flag.key])
        const [row] = await tx.query<{ id: number }>(
          `INSERT INTO feature_flags (project_id, key, name, filters, active, deleted, ensure_experience_continuity, tags,
             evaluation_runtime, created_by, last_modified_by)
           VALUES ($9, $1, $2, $3, $4, $5, $6, $7, $8, $10, $10) RETURNING id`,
          [...writeParams(flag), projectId, userId],
        )
        return (await byId(tx, projectId, row.id))!
      }))
    },
    async update({ projectId, id, userId, flag }) {
      return keyUnique(db.inTransaction(async (tx) => {
        await tx.query(
          `UPDATE feature_flags SET key = $1, name = $2, filters = $3, active = $4, deleted = $5,
             ensure_experience_continuity = $6, tags = $7, evaluation_runtime = $8, version = version + 1,
             last_modified_by = $11, updated_at = now()
           WHERE project_id = $9 AND id = $10`,
          [...writeParams(flag), projectId, id, userId],
        )
        return (await byId(tx, projectId, id))!
      }))
    },
  }
}
