import type { HogQLExpr, IntervalUnit } from '../../../domain/hogql/hogql-ast.ts'
import type { HogQLFunctionName } from '../../../domain/hogql/hogql-functions.ts'
import type { EventDialect } from '../event-dialect.ts'
import type { SqlParams } from '../sql-params.ts'
import type { ExprScope, Typed } from './hogql-sql-types.ts'

/** One call of an allow-listed function: its translated arguments, the call, the scope, the zone as SQL. */
export interface HogQLCallArgs {
  a: Typed[]
  call: Extract<HogQLExpr, { kind: 'call' }>
  scope: ExprScope
  tz: () => string
}
export type HogQLEmit = (args: HogQLCallArgs) => Typed

/**
 * Everything about HogQL's SQL that depends on the engine. The translator in this folder resolves
 * tables and fields, expands aliases and stars, types expressions and writes the statement's shape;
 * the dialect writes values, conversions, the project's relations, property access and the allow-
 * listed functions (a table typed by `HogQLFunctionName`, so a new function fails to compile in every
 * engine that lacks it). DuckDB: `storage/duckdb/duckdb-hogql-dialect.ts`; ClickHouse:
 * `storage/clickhouse/clickhouse-hogql-dialect.ts`.
 */
export interface HogQLDialect {
  /** Values of one statement; one placeholder (or literal) per distinct value, so GROUP BY text matches SELECT's. */
  createParams(): SqlParams
  /** A client constant typed for SQL; `digits` is an integer literal's text past 2^53. */
  constant(value: string | number | boolean, params: SqlParams, digits?: string): Typed
  bool(value: boolean): string
  /** A name of ours or a client's alias, quoted. */
  quote(name: string): string
  /** A GROUP BY / ORDER BY item that is also selected: its position, or its alias (ClickHouse 18.16 reads `ORDER BY 1` as a constant). */
  selectedRef(position: number, alias: string): string

  // --- Conversions, as ClickHouse converts (PostHog's semantics) -------------------------------------
  toNumber(t: Typed): string
  /** Text; times as the project's wall clock (`2024-06-01 12:00:00`), as ClickHouse's toString. */
  toText(t: Typed, scope: ExprScope): string
  /** An instant: strings are wall-clock times of the project's zone unless they carry an offset. */
  toDateTime(t: Typed, scope: ExprScope): string
  /** A date in the project's zone. */
  toDate(t: Typed, scope: ExprScope): string
  toBool(t: Typed): string

  // --- Operators ---------------------------------------------------------------------------------------
  interval(unit: IntervalUnit, n: Typed): Typed
  /** `time ± interval`: days and longer on the project's wall clock (a day is 23 hours across a spring change). */
  addInterval(time: Typed, op: '+' | '-', interval: Typed, scope: ExprScope): Typed
  /** Seconds from `right` to `left`, two instants. */
  secondsBetween(left: string, right: string): string
  /** `LIKE`, `ILIKE` and their negations on two texts. */
  like(left: string, op: 'like' | 'ilike' | 'not like' | 'not ilike', right: string): string
  concat(texts: readonly string[]): string

  // --- The project's tables ----------------------------------------------------------------------------
  /** The project's events as a relation aliased `alias` (the project filter always in it); `__person_id` selected when `person`. */
  eventsRelation(alias: string, projectId: number, params: SqlParams, needs: { person: boolean }): string
  /** The project's persons (after merges) from their events: `id`, `created_at`, and their newest properties. */
  personsRelation(alias: string, projectId: number, params: SqlParams): string
  /** The same engine's event-SQL dialect: plans of the domain (the sessions of `sessionsPlan`) compiled into a HogQL statement. */
  readonly events: EventDialect
  /** A key (path) of a property bag: `column` of the events relation or persons relation aliased `alias`. */
  property(alias: string, bag: 'properties' | 'person_properties', keys: readonly string[], params: SqlParams): string
  /** Whether a key (path) of a property bag is present (JSON null included). */
  propertyPresent(alias: string, bag: 'properties' | 'person_properties', keys: readonly string[], params: SqlParams): string
  /** A whole bag as JSON text (`{}` when the event has no person properties). */
  bagText(alias: string, bag: 'properties' | 'person_properties'): string
  /** An id column (uuid, person id) as text. */
  idText(sql: string): string
  /** `JOIN` of a relation: `LEFT` keeps left rows without a match, the right side's columns NULL. */
  join(kind: 'left' | 'inner', relation: string, on: string): string

  // --- Functions ---------------------------------------------------------------------------------------
  readonly functions: Record<HogQLFunctionName, HogQLEmit>

  // --- Answers -----------------------------------------------------------------------------------------
  /** PostHog's (ClickHouse's) name for a result column's type, from the engine's and the translator's. */
  typeName(engineType: string, type: Typed['type'], timeZone: string): string
  /** The engine's words for an error that is the statement's fault (a 400 naming it); null when it is the store's. */
  queryErrorDetail(err: unknown): string | null
}

/** A constant string argument (units, JSON keys); a 400 naming the function otherwise. */
export function constantText(call: HogQLCallArgs['call'], i: number, error: (m: string) => Error): string {
  const arg = call.args[i]!
  if (arg.kind === 'constant' && (typeof arg.value === 'string' || typeof arg.value === 'number')) return String(arg.value)
  throw error(`Argument ${i + 1} of ${call.name}() must be a constant.`)
}
