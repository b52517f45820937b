import type { HogQLSelect } from '../../domain/hogql/hogql-ast.ts'
import type { Plan } from '../../domain/query/query-plan.ts'

/** Rows of a query as plain JavaScript values: numbers (BIGINTs that fit), strings, booleans, Dates, null. */
export interface QueryRows {
  columns: string[]
  /** The engine's type name of each column (`VARCHAR`, `BIGINT`, `TIMESTAMP WITH TIME ZONE`...). */
  types: string[]
  rows: Record<string, unknown>[]
}

/** The guards every statement runs under. */
export interface RunGuards {
  /** Interrupts the statement in the engine when aborted (the client went away). */
  signal?: AbortSignal
  /** Interrupts the statement past this many milliseconds (`query_timeout`). */
  timeoutMs: number
  /** More rows than this is an error rather than a silently cut answer. */
  maxRows: number
}

/**
 * The port the query runners compute through: plans compiled by the event store's dialect and run
 * on connections of their own (never the ingestion writer's). Methods throw `AppError`
 * `query_timeout` when interrupted by the time limit, `validation_error` past `maxRows`.
 */
export interface QueryEngine {
  run(projectId: number, plan: Plan, guards: RunGuards): Promise<QueryRows>
  /**
   * Statements compiled elsewhere for this engine (HogQL's translator, funnel SQL) under the same
   * guards. The project filter is the compiler's duty; values are always bound.
   */
  runSql(sql: string, values: readonly (string | number | boolean | null)[], guards: RunGuards): Promise<QueryRows>
  /**
   * A parsed HogQL SELECT, translated by the store's own HogQL translator (the project filter on
   * every table it reads, values bound), under the guards. A 400 when the store refuses the query.
   */
  runHogQL(projectId: number, query: HogQLSelect, opts: { timeZone: string; now: Date }, guards: RunGuards): Promise<HogQLRows>
}

/** Rows of a HogQL query: `columns` are the statement's own (`c0`...), `hogqlColumns` the names PostHog gives them. */
export interface HogQLRows extends QueryRows {
  hogqlColumns: string[]
  /** PostHog's (ClickHouse's) type name of each column (`String`, `Int64`, `DateTime64(6, 'UTC')`, `Date`...). */
  hogqlTypes: string[]
  /** The statement the store ran (for the response's `sql`). */
  sql: string
}
