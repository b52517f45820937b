import type { ActionStepDefinition } from '../actions/match-action.ts'
import type { PropertyFilter } from '../properties/property-filter.ts'
import type { Interval } from './date-range.ts'
import type { OffsetSegment } from './bucket-keys.ts'

/**
 * The intermediate form of every query kind: a small relational plan that a storage dialect
 * compiles to SQL (DuckDB now; ClickHouse later). It names what to compute, never how a dialect
 * spells it: JSON extraction, time zones, quantiles and uniq counts are the dialect's business.
 * Literals are bound parameters in every dialect; no user text is spliced into SQL.
 */
export type Expr =
  /** A column of the relation the plan reads (for `events`: uuid, event, distinct_id, timestamp, elements_chain, group_0..4). */
  | { op: 'column'; name: string }
  /** A bound constant. */
  | { op: 'literal'; value: string | number | boolean | null }
  /** A bound instant (TIMESTAMPTZ). */
  | { op: 'time'; value: Date }
  /** A property of the event (`event`), of its person as on the event (`person`), as text; NULL when absent. */
  | { op: 'property'; source: 'event' | 'person'; key: string }
  /** The raw JSON of the event's `properties` or its person's. */
  | { op: 'properties'; source: 'event' | 'person' }
  /**
   * Event properties as one list (each as `property` gives it: text, NULL when absent or JSON null),
   * read in one pass over the properties: a value aggregates carry (`arg_min` of it: the first
   * event's) and `bundle_property` reads afterwards.
   */
  | { op: 'property_bundle'; keys: readonly string[] }
  /** Item `at` (0-based) of a `property_bundle` list. */
  | { op: 'bundle_property'; arg: Expr; at: number }
  /** The event's person after merges (persons on events + the override table). */
  | { op: 'person_id' }
  /** The greatest whole number not above a number (a BIGINT). */
  | { op: 'floor'; arg: Expr }
  /** Text to a double, NULL when it is not a number. */
  | { op: 'to_number'; arg: Expr }
  /**
   * The key (BIGINT, see `bucket-keys.ts`) of the interval holding the instant, in a zone given by
   * its offsets over the span the plan reads (`offsetSegments`).
   */
  | { op: 'bucket'; interval: Interval; offsets: readonly OffsetSegment[]; arg: Expr }
  /** A bucket key moved by `n` intervals (`shiftKey`). */
  | { op: 'shift'; interval: Interval; n: number | Expr; arg: Expr }
  /** Milliseconds since the epoch of an instant (a BIGINT), for keys that JavaScript compares. */
  | { op: 'epoch_ms'; arg: Expr }
  /** The instant (the engine's event timestamp type) of milliseconds since the epoch: `epoch_ms`'s inverse. */
  | { op: 'time_of_ms'; arg: Expr }
  /**
   * An aggregate; `arg_min`/`arg_max` give `arg` of the row with the least/greatest `by` (rows whose `by` is NULL ignored);
   * `list` the values as an array (with `distinct`, each once; without, in the order of `by` when given).
   */
  | { op: 'aggregate'; fn: AggregateFn; arg?: Expr; by?: Expr; distinct?: boolean; quantile?: number }
  | { op: 'binary'; fn: BinaryFn; left: Expr; right: Expr }
  /** A 64-bit word with only bit `index` (0-63) set. */
  | { op: 'bit_flag'; index: Expr }
  /** Whether the word `arg` shares a set bit with `mask` (a decimal string of an unsigned 64-bit value). */
  | { op: 'bits_any'; arg: Expr; mask: string }
  /** The 64-bit word `arg` shifted right by `by` bits (0-63). */
  | { op: 'bits_shift_right'; arg: Expr; by: Expr }
  | { op: 'and' | 'or'; args: Expr[] }
  | { op: 'not'; arg: Expr }
  | { op: 'is_null'; arg: Expr }
  | { op: 'in'; arg: Expr; values: Array<string | number> }
  | { op: 'case'; when: Array<[Expr, Expr]>; else: Expr }
  | { op: 'coalesce'; args: Expr[] }
  /** Texts joined with a separator (NULL parts are left out). */
  | { op: 'concat'; args: Expr[]; separator: string }
  | { op: 'to_text'; arg: Expr }
  /** Text lowered as the engine's `lower` does (Unicode where it can). */
  | { op: 'lower'; arg: Expr }
  /** Whether an RE2 pattern of ours (a constant, never user text) is found in the text; NULL for NULL. */
  | { op: 'matches'; arg: Expr; pattern: string }
  /** The first capture group of an RE2 pattern of ours in the text; NULL when it does not match or the group is empty. */
  | { op: 'regex_extract'; arg: Expr; pattern: string }
  /**
   * A constant table of ours (never user text) looked up by exact text: the value whose key list
   * holds `arg`, NULL when none does (PostHog's dictionary lookups, e.g. channel definitions).
   */
  | { op: 'lookup'; arg: Expr; table: ReadonlyArray<readonly [value: string, keys: readonly string[]]> }
  /**
   * A window function over the relation (`lag`, `lead`, or an aggregate), partitioned and ordered,
   * over the dialect's default frame or `frame`.
   */
  | { op: 'window'; fn: 'lag' | 'lead' | 'row_number' | 'dense_rank' | AggregateFn; arg?: Expr; by?: Expr; partitionBy: Expr[]; orderBy: Array<{ expr: Expr; desc?: boolean }>; frame?: WindowFrame }
  /** A property filter with the shared operator semantics (`domain/properties`), on the event or its person. */
  | { op: 'property_filter'; filter: PropertyFilter }
  /**
   * A property filter's operator and value applied to a value of the relation (its text; NULL is an
   * absent key), with the shared operator semantics: filters on columns that are not event or person
   * properties (a session's `$entry_pathname`, `$channel_type`...). The filter's key is not read.
   */
  | { op: 'value_filter'; arg: Expr; filter: PropertyFilter }
  /** Whether the event matches an action (OR over its steps). */
  | { op: 'action'; steps: readonly ActionStepDefinition[] }
  /**
   * Whether `arg` is among the values of the plan's one column (never NULL: false when not, so it
   * negates cleanly). The plan reads the same project's events: membership of a person in a set
   * computed from events (behavioural cohort criteria).
   */
  | { op: 'in_plan'; arg: Expr; plan: Plan }
  /** Whether the RE2 pattern (user text, bound as a parameter; checked with RE2 before it gets here) is found in `arg`. */
  | { op: 'regex_match'; arg: Expr; pattern: string }
  /** `arg` with every match of the RE2 pattern replaced (`\\1`.. name groups in `replacement`), as ClickHouse's `replaceRegexpAll`. */
  | { op: 'regex_replace'; arg: Expr; pattern: string; replacement: string }

/** `mode`: the most frequent non-NULL value (either of equally frequent ones). */
export type AggregateFn = 'count' | 'uniq' | 'sum' | 'avg' | 'min' | 'max' | 'quantile' | 'any' | 'bit_or' | 'arg_min' | 'arg_max' | 'list' | 'mode'

/**
 * A window frame: `rows` counts rows, `range` compares the (single) order key. An end is
 * `'unbounded'`, `0` (the current row and, for `range`, its peers), or a number of rows / an
 * amount of the order key before (negative) or after (positive) it. `excludeCurrent` leaves the
 * current row itself out (its peers stay).
 */
export interface WindowFrame {
  unit: 'rows' | 'range'
  start: 'unbounded' | number
  end: 'unbounded' | number
  excludeCurrent?: boolean
}
export type BinaryFn = '=' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/'

export interface SelectItem {
  alias: string
  expr: Expr
}

/**
 * A relation: the project's events, its session partials, another plan's rows, or another plan's rows each repeated
 * `times` times with a column `k` = 0..times-1 beside them (rolling windows: a person active on a
 * day counts for the `times` days that follow), or two plans' rows joined on equal values of the
 * columns named in `using` (inner join; `left` keeps its rows without a match, NULL beside them).
 * The two sides' other column names must differ.
 */
export type Source =
  | { kind: 'events' }
  /**
   * The project's session partials (the sessions aggregate the event store keeps, see
   * `SESSION_PARTIAL_COLUMNS`): rows to merge per session, never a session each.
   */
  | { kind: 'session_partials' }
  | { kind: 'plan'; plan: Plan }
  | { kind: 'spread'; plan: Plan; times: number }
  | { kind: 'join'; left: Plan; right: Plan; using: readonly string[]; keepLeft?: boolean }
  | { kind: 'sequence'; plan: Plan; partitionBy: readonly string[]; orderBy: readonly string[]; steps: readonly SequenceStep[] }

/**
 * A column a `sequence` source adds to each row of its plan: the rows are grouped by `partitionBy`
 * and ordered by `orderBy` (columns of the plan, ascending; the caller makes the order total), and
 * each step reads the plan's columns and the aliases of the steps before it:
 * - `row_number`: the row's 1-based position in its partition;
 * - `lag` / `lead`: `arg` of the row `offset` (default 1) before / after (NULL past the ends);
 * - `running_sum`: the sum of `arg` from the partition's first row to this one;
 * - `partition_min` / `partition_max`: over the whole partition, NULLs ignored (NULL when all are);
 * - `partition_count`: the partition's number of rows;
 * - `run_position`: the row's 1-based position in its run, a run starting at the partition's first
 *   row and after every row where `arg` is true; NULL past `upTo`;
 * - `map`: `arg` of the row itself (a value the later steps read);
 * - `filter`: keeps only the rows where `arg` is true (its column is then true): the steps after it
 *   see the remaining rows alone, in the same order (a `lag` after it is the previous row kept);
 * - `prune`: the rows where `arg` is not true may be dropped, or kept: the plan promises that they
 *   change neither the steps after it nor what the reader computes, so each engine does what is
 *   cheaper (DuckDB drops them: its windows sort each level again; ClickHouse's arrays keep them).
 *   It adds no column (its alias is not read);
 * - `max_before`: the greatest `arg` (a BIGINT within +-2^61, e.g. epoch ms) over the partition's
 *   rows before this one and its peers (rows of the same order key), the row itself left out; NULL
 *   when there is none (SQL's `RANGE UNBOUNDED PRECEDING EXCLUDE CURRENT ROW`). Peers are allowed
 *   here: the order need not be total when only `max_before` steps read it.
 * Engines with window functions write windows (a level per dependency depth, a `WHERE` per filter or prune);
 * engines without them (ClickHouse 18.16) sort each partition into arrays and compute every step on
 * the arrays, filters included, in one pass (a `max_before` reading another step in a nested SELECT).
 */
export interface SequenceStep {
  alias: string
  fn: 'row_number' | 'lag' | 'lead' | 'running_sum' | 'partition_min' | 'partition_max' | 'partition_count' | 'run_position' | 'map' | 'filter' | 'prune' | 'max_before'
  arg?: Expr
  /** `lag` / `lead`: how many rows away (a whole number from 1; 1 when left out). */
  offset?: number
  /** `run_position`: the greatest position given (a whole number from 1). */
  upTo?: number
}

/**
 * `SELECT select FROM source WHERE where GROUP BY groupBy HAVING having ORDER BY orderBy LIMIT OFFSET`.
 * On `events` the project filter (and the persons join when `person_id` is read) is always added by
 * the compiler: a plan cannot read another project's rows.
 */
export interface Plan {
  source: Source
  select: SelectItem[]
  where?: Expr
  groupBy?: Expr[]
  having?: Expr
  orderBy?: Array<{ expr: Expr; desc?: boolean }>
  limit?: number
  offset?: number
}

export const col = (name: string): Expr => ({ op: 'column', name })
export const lit = (value: string | number | boolean | null): Expr => ({ op: 'literal', value })
export const and = (...args: Array<Expr | undefined>): Expr | undefined => {
  const present = args.filter((a): a is Expr => a !== undefined)
  return present.length === 0 ? undefined : present.length === 1 ? present[0] : { op: 'and', args: present }
}
export const eq = (left: Expr, right: Expr): Expr => ({ op: 'binary', fn: '=', left, right })
export const count = (): Expr => ({ op: 'aggregate', fn: 'count' })
export const bin = (fn: BinaryFn, left: Expr, right: Expr): Expr => ({ op: 'binary', fn, left, right })
export const notNull = (e: Expr): Expr => ({ op: 'not', arg: { op: 'is_null', arg: e } })
/** `CASE WHEN cond THEN then ELSE otherwise END` (NULL otherwise by default). */
export const when = (cond: Expr, then: Expr, otherwise: Expr = lit(null)): Expr => ({ op: 'case', when: [[cond, then]], else: otherwise })
/** Select items passing columns of the source through under their own names. */
export const keep = (names: readonly string[]): SelectItem[] => names.map((n) => ({ alias: n, expr: col(n) }))
export const fromEvents = (): Source => ({ kind: 'events' })
export const fromPlan = (plan: Plan): Source => ({ kind: 'plan', plan })

/** `timestamp` in `[from, to)`. */
export function timeBetween(from: Date, to: Date): Expr {
  return and(
    { op: 'binary', fn: '>=', left: col('timestamp'), right: { op: 'time', value: from } },
    { op: 'binary', fn: '<', left: col('timestamp'), right: { op: 'time', value: to } },
  )!
}
