import { hogqlError } from './hogql-error.ts'

export interface HogQLFunction {
  /** Fewest and most arguments (`max` Infinity: variadic). */
  min: number
  max: number
  aggregate: boolean
  /** How many parameters a parametric aggregate takes in its first parentheses (`quantile(0.9)(x)`). */
  params?: number
}

const agg = (min: number, max: number, params?: number): HogQLFunction => ({ min, max, aggregate: true, params })
const fn = (min: number, max: number): HogQLFunction => ({ min, max, aggregate: false })

/**
 * The functions a HogQL query may call, by HogQL name (PostHog's `posthog/hogql/functions/mapping.py`
 * names, ClickHouse semantics). Anything else is refused with its name: no function reaches the event
 * store by the name the client wrote.
 */
export const HOGQL_FUNCTIONS = {
  count: agg(0, 1),
  countIf: agg(1, 1),
  uniq: agg(1, Infinity),
  uniqExact: agg(1, Infinity),
  uniqIf: agg(2, 2),
  sum: agg(1, 1),
  sumIf: agg(2, 2),
  avg: agg(1, 1),
  avgIf: agg(2, 2),
  min: agg(1, 1),
  max: agg(1, 1),
  any: agg(1, 1),
  argMax: agg(2, 2),
  argMin: agg(2, 2),
  median: agg(1, 1),
  quantile: agg(1, 1, 1),
  toStartOfMinute: fn(1, 1),
  toStartOfHour: fn(1, 1),
  toStartOfDay: fn(1, 1),
  toStartOfWeek: fn(1, 1),
  toStartOfMonth: fn(1, 1),
  toStartOfQuarter: fn(1, 1),
  toStartOfYear: fn(1, 1),
  toYear: fn(1, 1),
  toMonth: fn(1, 1),
  toDayOfMonth: fn(1, 1),
  toDayOfWeek: fn(1, 1),
  toHour: fn(1, 1),
  toDate: fn(1, 1),
  toDateTime: fn(1, 1),
  dateDiff: fn(3, 3),
  now: fn(0, 0),
  today: fn(0, 0),
  lower: fn(1, 1),
  upper: fn(1, 1),
  trim: fn(1, 1),
  concat: fn(1, Infinity),
  length: fn(1, 1),
  substring: fn(2, 3),
  replaceAll: fn(3, 3),
  empty: fn(1, 1),
  notEmpty: fn(1, 1),
  isNull: fn(1, 1),
  isNotNull: fn(1, 1),
  coalesce: fn(1, Infinity),
  ifNull: fn(2, 2),
  if: fn(3, 3),
  multiIf: fn(3, Infinity),
  toString: fn(1, 1),
  toInt: fn(1, 1),
  toFloat: fn(1, 1),
  round: fn(1, 2),
  floor: fn(1, 1),
  abs: fn(1, 1),
  JSONExtractString: fn(2, Infinity),
  JSONExtractFloat: fn(2, Infinity),
  JSONHas: fn(2, Infinity),
} as const satisfies Record<string, HogQLFunction>

export type HogQLFunctionName = keyof typeof HOGQL_FUNCTIONS

// SQL's own names are case-insensitive in HogQL (`COUNT()`, `Sum(x)`); ClickHouse's keep their case.
const CASE_INSENSITIVE = new Set<string>(['count', 'sum', 'avg', 'min', 'max', 'coalesce', 'lower', 'upper', 'length', 'concat', 'if', 'round', 'floor', 'abs', 'now', 'today', 'trim', 'substring'])

/** The allow-listed function a call names, or a 400 naming it. */
export function lookupFunction(name: string): HogQLFunctionName {
  if (Object.hasOwn(HOGQL_FUNCTIONS, name)) return name as HogQLFunctionName
  const lower = name.toLowerCase()
  if (CASE_INSENSITIVE.has(lower)) return lower as HogQLFunctionName
  throw hogqlError(`Unsupported function "${name}": HogQL here allows ${Object.keys(HOGQL_FUNCTIONS).join(', ')}.`)
}

/** Checks a call's arity and parameters against the allow-list; a 400 naming the function otherwise. */
/**
 * Arguments of one call, variadic ones included: DuckDB nests a long argument list (concat's `||`
 * chain) past its expression depth limit of 1,000, a parser error that was a 500 at 2,000 arguments.
 */
export const MAX_CALL_ARGUMENTS = 500

export function checkCall(name: HogQLFunctionName, args: number, params: number | null): HogQLFunction {
  const f: HogQLFunction = HOGQL_FUNCTIONS[name]
  if (args > MAX_CALL_ARGUMENTS) throw hogqlError(`Function "${name}" takes at most ${MAX_CALL_ARGUMENTS} arguments, got ${args}.`)
  if ((f.params ?? null) !== null && params !== f.params) throw hogqlError(`Function "${name}" takes ${f.params} parameter(s) first: ${name}(p)(x).`)
  if (f.params === undefined && params !== null) throw hogqlError(`Function "${name}" takes no parameters.`)
  if (args < f.min || args > f.max) {
    const range = f.min === f.max ? `${f.min}` : f.max === Infinity ? `at least ${f.min}` : `${f.min} to ${f.max}`
    throw hogqlError(`Function "${name}" takes ${range} argument(s), got ${args}.`)
  }
  return f
}
