import type { HogQLSelect } from '../../../domain/hogql/hogql-ast.ts'
import type { SqlParams } from '../sql-params.ts'
import type { HogQLDialect } from './hogql-dialect.ts'

/**
 * What the translator knows of an expression's type, enough to pick the engine's conversions:
 * `json` is a property's text (a string that compares as a number beside a number), `datetime` an
 * instant, `date` a calendar date in the project's zone.
 */
export type HType = 'string' | 'number' | 'bool' | 'datetime' | 'date' | 'json' | 'null' | 'interval' | 'unknown'

export interface Typed {
  sql: string
  type: HType
  /** The value of a string constant (for reading it as a time in the project's zone). */
  text?: string
  /** An interval of days or longer (moves on the wall clock) rather than of hours or less. */
  calendar?: boolean
  /** An interval's unit and count (SQL), for engines that add intervals by function. */
  interval?: { unit: string; n: string }
  /** A whole property bag (`properties`, `person.properties`): a key of it, read as the bag's own field would be, and whether it is present. */
  bag?: (keys: readonly string[]) => Typed
  bagHas?: (keys: readonly string[]) => string
}

/** What expressions need from the query around them. */
export interface ExprScope {
  dialect: HogQLDialect
  params: SqlParams
  /** The project's zone (IANA), for times read and written as PostHog does. */
  timeZone: string
  now: Date
  /** A field of the tables (or select aliases) in scope. */
  field(chain: readonly string[]): Typed
  /** A nested SELECT (IN, scalar subquery) with its first column's type. */
  subquery(query: HogQLSelect): Typed
}
