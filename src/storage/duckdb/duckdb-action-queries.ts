import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api'
import type { ActionStepDefinition } from '../../domain/actions/match-action.ts'
import { compileActionSql } from '../event-sql/action-sql.ts'
import type { SqlParams } from '../event-sql/sql-params.ts'
import { duckDbEventDialect as d } from './duckdb-event-dialect.ts'

/** A half-open time range `[after, before)`; either bound may be left out. */
export interface ActionTimeRange {
  after?: Date
  before?: Date
}

export interface ActionPersonsQuery extends ActionTimeRange {
  limit: number
  offset: number
}

/** One page of the persons (uuids, after merges) that performed an action, in ascending order. */
export interface ActionPersonsPage {
  personIds: string[]
  hasMore: boolean
}

/** Queries over the events of an action, run inside DuckDB (no event is loaded into JavaScript). */
export interface DuckDbActionQueries {
  /** How many events of the project in the range match any step. */
  countActionMatches(projectId: number, steps: readonly ActionStepDefinition[], range?: ActionTimeRange): Promise<number>
  /**
   * The distinct effective persons with a matching event (`person_id` resolved through
   * `person_overrides`, so a merged person's earlier events count for the person they merged
   * into), sorted by uuid, paginated.
   */
  actionPersons(projectId: number, steps: readonly ActionStepDefinition[], query: ActionPersonsQuery): Promise<ActionPersonsPage>
}

/**
 * `SELECT <what> FROM` the project's events in the range that match the action, with its bound
 * values. The elements chain is parsed in SQL only when a step reads it. When every step names an
 * event, the steps are grouped by event name and each group is its own branch of a UNION ALL: the
 * branches select disjoint rows (an event has one name), so no row is counted twice, and each
 * branch reads only the columns its steps need (a `$pageview` url step reads `properties` of
 * pageviews only, an `$autocapture` selector step the chains of clicks only).
 */
export function actionMatchSql(
  projectId: number,
  steps: readonly ActionStepDefinition[],
  range: ActionTimeRange,
  what: string,
): { sql: string; values: DuckDBValue[] } {
  const params = d.createParams()
  const where = [`project_id = ${d.cast(params.add(projectId), 'int32')}`]
  if (range.after) where.push(`timestamp >= ${d.time(range.after.toISOString(), params)}`)
  if (range.before) where.push(`timestamp < ${d.time(range.before.toISOString(), params)}`)
  const branches = stepsByEvent(steps).map((group) => branchSql(group, where, params))
  return { sql: `SELECT ${what} FROM (${branches.join(' UNION ALL ')}) AS events`, values: params.values as DuckDBValue[] }
}

/** The steps in groups of one event name each, in first-seen order; one group when a step names no event. */
function stepsByEvent(steps: readonly ActionStepDefinition[]): ActionStepDefinition[][] {
  if (steps.length === 0 || steps.some((s) => !s.event)) return [[...steps]]
  const groups = new Map<string, ActionStepDefinition[]>()
  for (const step of steps) groups.set(step.event!, [...(groups.get(step.event!) ?? []), step])
  return [...groups.values()]
}

/** The rows of `events` (every column) matching one of `steps`. */
function branchSql(steps: readonly ActionStepDefinition[], where: readonly string[], params: SqlParams): string {
  const action = compileActionSql(steps, d, params)
  // Without element constraints the condition reads only the row's own columns (the prefilter then
  // says the same with no literal bound): filtered once, in place. With them, the prefilter (always
  // used: its literals are bound) cuts the rows whose chain is parsed.
  if (!action.needsElements) return `SELECT * FROM events WHERE ${[...where, action.condition].join(' AND ')}`
  return `SELECT * EXCLUDE (__els) FROM (SELECT events.*, ${d.elements.parse()} AS __els FROM events
    WHERE ${[...where, action.prefilter].join(' AND ')}) AS events WHERE ${action.condition}`
}

export function createDuckDbActionQueries(connection: DuckDBConnection): DuckDbActionQueries {
  return {
    async countActionMatches(projectId, steps, range = {}) {
      const { sql, values } = actionMatchSql(projectId, steps, range, 'count(*) AS n')
      const rows = (await connection.runAndReadAll(sql, values)).getRowObjects()
      return Number(rows[0]?.n ?? 0)
    },
    async actionPersons(projectId, steps, query) {
      const { sql, values } = actionMatchSql(projectId, steps, query, 'events.person_id')
      const limit = Math.max(0, Math.floor(query.limit))
      const offset = Math.max(0, Math.floor(query.offset))
      // The project id is a number: inlined, so the action's own parameters keep their positions.
      const page = `SELECT DISTINCT COALESCE(o.override_person_id, m.person_id)::VARCHAR AS person
        FROM (${sql}) m LEFT JOIN person_overrides o ON o.project_id = ${Number(projectId) | 0} AND o.old_person_id = m.person_id
        WHERE m.person_id IS NOT NULL ORDER BY person LIMIT ${limit + 1} OFFSET ${offset}`
      const rows = (await connection.runAndReadAll(page, values)).getRowObjects()
      const ids = rows.map((r) => String(r.person))
      return { personIds: ids.slice(0, limit), hasMore: ids.length > limit }
    },
  }
}
