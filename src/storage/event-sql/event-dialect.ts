import type { Interval } from '../../domain/query/date-range.ts'
import type { OffsetSegment } from '../../domain/query/bucket-keys.ts'
import type { AggregateFn, SequenceStep, WindowFrame } from '../../domain/query/query-plan.ts'
import type { ValueSqlDialect } from '../sql/value-sql-dialect.ts'
import type { SqlParams } from './sql-params.ts'

/**
 * Everything about event SQL that depends on the engine. The layer in this folder (the plan
 * compiler, property, action, element, date and version filters) writes the portable shape of a
 * statement and asks the dialect for every piece that differs between engines; an engine is one
 * object implementing this interface (DuckDB: `storage/duckdb/duckdb-event-dialect.ts`).
 *
 * Arguments named `text`, `expr`, `value`... are SQL already written (by the layer or the dialect);
 * arguments named `param(s)` are placeholders a `SqlParams` of this dialect returned. User values only
 * ever reach SQL through `params.add` (or `literal`, which calls it): a dialect without bound
 * parameters (ClickHouse's HTTP interface) escapes them there, in one place.
 *
 * Columns of the events relation may be written unqualified (`event`, `properties`, `elements_chain`,
 * `person_properties`, `mat_*`): every FROM the layer writes has one events relation in scope.
 */
export interface EventDialect {
  /** The engine's name, for messages and the conformance suite's titles. */
  readonly name: string

  // --- Literals and parameters -------------------------------------------------------------------
  /** A fresh set of parameters for one statement (positional `$n`, or inlined escaped literals). */
  createParams(): SqlParams
  /** A user value typed for SQL: an integer as a 64-bit integer, another number as a double, text as text. */
  literal(value: string | number | boolean, params: SqlParams): string
  /** A number as a double (a comparison's right side). */
  double(value: number, params: SqlParams): string
  /** An instant (ISO 8601 text) as the engine's timestamp, comparable with `timestamp`. */
  time(iso: string, params: SqlParams): string
  /** A constant of ours (a pattern, a separator; never user text) as a string literal. */
  constant(text: string): string
  /** `true` or `false` as a SQL boolean. */
  bool(value: boolean): string
  /** A plan alias (already checked to be an identifier) as a quoted name. */
  identifier(name: string): string

  // --- Casts --------------------------------------------------------------------------------------
  cast(expr: string, type: SqlType): string
  /** `text` as a double, NULL when it does not parse. */
  tryDouble(text: string): string
  /** True when a double is NaN. */
  isNaN(value: string): string

  // --- The events relation ------------------------------------------------------------------------
  /**
   * FROM and WHERE head of the project's events, with the effective person (after merges) and the
   * parsed elements (`elements.parse`) when asked; the caller appends ` AND <condition>`.
   */
  eventsFrom(projectId: number, params: SqlParams, needs: { person: boolean; elements: boolean }): string
  /**
   * FROM and WHERE head of the project's session partials (the `sessions` table, columns
   * `SESSION_PARTIAL_COLUMNS`); the caller appends ` AND <condition>`.
   */
  sessionPartialsFrom(projectId: number, params: SqlParams): string
  /** A column of the events relation by its plan name (unknown names are a 400). */
  eventColumn(name: string): string
  /** The effective person id (the merge override when there is one); needs `person` in `eventsFrom`. */
  readonly personId: string

  // --- Shared sub-plans, joins, spreading ---------------------------------------------------------
  /** `cte`: a plan read twice becomes one named, materialized CTE; `inline`: its subquery is repeated. */
  readonly sharedPlans: 'cte' | 'inline'
  /** One CTE definition (`name AS (body)`), for `WITH`. Used only when `sharedPlans` is `cte`. */
  cte(name: string, body: string): string
  /** Two FROM items joined on equal columns; `keepLeft` keeps left rows without a match (their right columns NULL). */
  join(left: string, right: string, using: readonly string[], keepLeft: boolean): string
  /** A FROM item repeated `times` times, the copy's number (0-based) readable as column `k`. */
  spread(from: string, times: number): string
  /**
   * A grouped or ordered expression that is also selected, as GROUP BY / ORDER BY writes it: by its
   * position (1-based) where the engine reads positions, else by its alias (ClickHouse 18.16 reads
   * `ORDER BY 1` as the constant 1, silently).
   */
  selectedRef(position: number, alias: string): string

  // --- Window functions or arrays -----------------------------------------------------------------
  /** An aggregate or ranking function over a window (an engine without windows rewrites or refuses). */
  window(call: WindowCall): string
  aggregate(fn: AggregateFn, arg: string | undefined, opts: { distinct?: boolean; quantile?: number; by?: string }): string

  // --- JSON property access -----------------------------------------------------------------------
  /** A property's text, NULL when absent or JSON null (breakdowns, math). */
  property(source: PropertySource, key: string, params: SqlParams): string
  /** The whole property bag as JSON text (`{}` for an event without person properties). */
  properties(source: PropertySource): string
  /** The event's properties of these keys as one list (1-based), each as `property` gives it, the properties read once. */
  propertyList(keys: readonly string[], params: SqlParams): string
  /** A property as a filter reads it: whether the key is present, and its text (`null` for JSON null). */
  propertyValue(source: PropertySource, key: string, params: SqlParams): ValueSource
  /** `url` as text when the event's `$current_url` is a JSON string, else NULL or '' (action url steps). */
  stringProperty(key: string, params: SqlParams): string

  // --- Dates in a time zone -----------------------------------------------------------------------
  /** The bucket key of an instant (see `domain/query/bucket-keys.ts`), from the zone's offsets over the span read. */
  bucket(interval: Interval, offsets: readonly OffsetSegment[], ts: string): string
  /** A bucket key moved by `n` intervals; `n` is SQL (a whole-number literal or an integer expression). */
  shift(interval: Interval, n: string, key: string): string
  /** An instant as whole epoch milliseconds. */
  epochMs(ts: string): string
  /** The instant of milliseconds since the epoch, of the type the events' `timestamp` has. */
  timeOfMs(ms: string): string

  // --- Regex and string matching ------------------------------------------------------------------
  /** True when the RE2 pattern (SQL text) is found in `text`. */
  regexMatch(text: string, pattern: string): string
  /** The first capture group of the RE2 pattern (SQL text) in `text`; NULL when it does not match or captures ''. */
  regexExtract(text: string, pattern: string): string
  /** A pattern checked by the domain's RE2 rewritten for the engine's RE2 (named groups). */
  regexSource(source: string): string
  /** `text` with A-Z lowered and nothing else (the domain's `asciiLowercase`). */
  asciiLower(text: string): string
  /** `text` lowered as the engine's `lower` does (Unicode where it can). */
  lower(text: string): string
  /** A literal (not a pattern) substring, prefix or suffix test; `%` and `_` are plain characters. */
  contains(text: string, needle: string): string
  startsWith(text: string, prefix: string): string
  endsWith(text: string, suffix: string): string
  /** The texts joined by `separator` (SQL), NULLs skipped. */
  concatWs(separator: string, args: readonly string[]): string

  // --- Lists: the parsed elements chain -----------------------------------------------------------
  readonly elements: ElementsDialect

  // --- Bits (retention words, active-user sets) ---------------------------------------------------
  bitFlag(index: string): string
  bitsAny(word: string, mask: string): string
  bitsShiftRight(word: string, by: string): string

  // --- Dates and versions in property filters -----------------------------------------------------
  /** The dialect the shared date and semver filter SQL (`storage/sql/*-filter-sql.ts`) runs on. */
  values(params: SqlParams): ValueSqlDialect

  // --- Paths (PathsQuery): regex replacement and per-partition sequences ----------------------------
  /** `text` with every match of the RE2 pattern replaced by `replacement` (`\\1` names a group), as `replaceRegexpAll`. */
  regexReplace(text: string, pattern: string, replacement: string): string
  /**
   * A FROM item: the rows of `from` (a subquery with the named `columns`) with the sequence's steps
   * as more columns (see `SequenceStep` in `domain/query/query-plan.ts`). A step's `arg` is written
   * by the layer with the column references the dialect gives (`ref(name)`: a column, or a lambda's
   * parameter); `refs` lists the names an argument reads.
   */
  sequence(call: SequenceCall): string
}

export interface SequenceCall {
  from: string
  /** The source's columns (plan aliases, already checked). */
  columns: readonly string[]
  partitionBy: readonly string[]
  orderBy: readonly string[]
  steps: ReadonlyArray<{ alias: string; fn: SequenceStep['fn']; offset: number; upTo?: number; arg?: { refs: readonly string[]; sql(ref: (name: string) => string): string } }>
  /**
   * The columns (of the rows and the steps) the plan reading the sequence reads, besides the
   * partition keys: the others need not be carried through the sorts and filters nor returned.
   * All of them when absent.
   */
  output?: readonly string[]
}

export type SqlType = 'int32' | 'int64' | 'uint64' | 'float64' | 'text'
export type PropertySource = 'event' | 'person'

/** Where a filter reads its value: `present` a SQL boolean (the key exists), `text` its string form, read only when present. */
export interface ValueSource {
  present: string
  text: string
}

export interface WindowCall {
  fn: 'lag' | 'lead' | 'row_number' | 'dense_rank' | AggregateFn
  arg?: string
  by?: string
  partitionBy: readonly string[]
  orderBy: ReadonlyArray<{ sql: string; desc?: boolean }>
  frame?: WindowFrame
}

/** One element of the parsed chain, inside `any`/`tokens`. */
export interface ElementRef {
  /** A field's text (positions as canonical integer text), NULL when the element has none. */
  field(name: ElementField): string
  /** True when the element has the class (a bound parameter). */
  hasClass(param: string): string
  /** The element's last value of an attribute (`attr__name`, a bound parameter), NULL when absent. */
  attribute(param: string): string
}

export type ElementField = 'tag' | 'text' | 'href' | 'attr_id' | 'nth_child' | 'nth_of_type'

/**
 * The `elements_chain` column parsed in SQL with the domain's patterns (`parseElementsChain`):
 * `parse` is selected beside the row as `__els` (by `eventsFrom` when `elements` is asked), and
 * conditions read it through `any` and `tokens`.
 */
export interface ElementsDialect {
  /** The parsed chain of the row's `elements_chain` (selected as `__els`). */
  parse(): string
  /** True when some element of `__els` satisfies the condition. */
  any(condition: (el: ElementRef) => string): string
  /** Each element of `__els` (innermost first) as the concatenation of `parts`, joined by `,`. */
  tokens(parts: (el: ElementRef) => readonly string[]): string
}

// --- Window functions as array programs (engines without windows: ClickHouse 18.16) --------------
// Declared here, at the end, as a second part of the interface (TypeScript merges the two).

export interface EventDialect {
  /**
   * Present on engines without window functions. The compiler then leaves a plan's window calls to
   * this method: it gets the plan's source (`from`, already aliased `t`, with its `where`), the
   * source's columns, and the window calls found in the select (each named), and returns one
   * relation (a statement) holding every source row that passes `where` with its columns under
   * their own names plus one column per window call. The plan's select then runs over it.
   */
  windowRelation?(input: WindowRelationInput): string
  /**
   * True where a SELECT's alias replaces a column of the same name everywhere in that SELECT (its
   * other expressions, WHERE, GROUP BY), qualified or not: ClickHouse. The compiler then selects such
   * a plan under internal names and renames in an outer SELECT.
   */
  readonly aliasesShadowColumns?: boolean
}

export interface WindowRelationInput {
  /** The FROM item of the plan's source, aliased `t` (a subquery, a spread or a join). */
  from: string
  /** The plan's WHERE condition over the source's columns, if any. */
  where?: string
  /** The source's columns, as quoted identifiers. */
  columns: readonly string[]
  /** The window calls of the select, each with the (unquoted, `__w<n>`) name its result takes. */
  windows: ReadonlyArray<{ name: string; call: WindowCall }>
}
