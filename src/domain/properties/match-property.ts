import type { PropertyBag, PropertyFilter } from './property-filter.ts'
import { parseFilterDate, parsePropertyDate, parseRustFloat, resolveFilterDate } from './property-date.ts'
import { assertNever, isPropertyOperator } from './property-operators.ts'
import { asciiLowercase, isTruthy, isTruthyOrFalsy, toPropertyString } from './property-string.ts'
import { caretRange, compareSemver, isInSemverRange, parseSemver, tildeRange, wildcardRange } from './semver.ts'
import type { SemverRange } from './semver.ts'
import { compileRegex } from './compile-regex.ts'

/** A compiled filter: true when the property bag satisfies it at time `now` (epoch ms). */
export type PropertyMatcher = (props: PropertyBag, now: number) => boolean

/** Matches one present value; `onMissing` is the answer when the key is absent. */
interface ValueMatcher {
  match: (value: unknown, now: number) => boolean
  onMissing: boolean
}

const hasOwn = Object.prototype.hasOwnProperty
const never: ValueMatcher = { match: () => false, onMissing: false }

/**
 * Compiles a property filter into a matcher with PostHog's semantics, following the Rust flags
 * service with complete properties (rust/feature-flags/src/properties/property_matching.rs):
 * - an absent key fails every operator except the negative ones (`is_not`, `not_icontains`,
 *   `not_regex`, `not_starts_with`, `not_ends_with`, `not_icontains_multi`, `is_not_set`);
 * - a `null` filter value fails everything but `is_set` / `is_not_set`;
 * - comparisons that Rust rejects as invalid (non-numeric `gt`, bad semver, bad regex) fail.
 * Regexes, dates and versions in the filter are parsed once, here. `negation`, `cohort` and
 * `flag` filters are handled by the caller (flag engine / cohort matcher).
 */
export function compilePropertyFilter(filter: PropertyFilter): PropertyMatcher {
  const key = filter.key
  const operator = filter.operator ?? 'exact'
  if (operator === 'is_set') return (props) => hasOwn.call(props, key)
  if (operator === 'is_not_set') return (props) => !hasOwn.call(props, key)
  const { match, onMissing } = compileValueMatcher(operator, filter.value)
  return (props, now) => (hasOwn.call(props, key) ? match(props[key], now) : onMissing)
}

/** One-off convenience over {@link compilePropertyFilter}; compile once for hot paths. */
export function matchProperty(filter: PropertyFilter, props: PropertyBag, now: number = Date.now()): boolean {
  return compilePropertyFilter(filter)(props, now)
}

function compileValueMatcher(operator: string, value: unknown): ValueMatcher {
  if (value === null || value === undefined || !isPropertyOperator(operator)) return never
  switch (operator) {
    case 'is_set':
      return { match: () => true, onMissing: false }
    case 'is_not_set':
      return { match: () => false, onMissing: true }
    case 'exact':
      return { match: compileExact(value), onMissing: false }
    case 'is_not': {
      const exact = compileExact(value)
      return { match: (v) => !exact(v), onMissing: true }
    }
    case 'icontains':
    case 'not_icontains':
    case 'starts_with':
    case 'not_starts_with':
    case 'ends_with':
    case 'not_ends_with':
      return compileText(operator, asciiLowercase(toPropertyString(value)))
    case 'icontains_multi':
    case 'not_icontains_multi': {
      const needles = (Array.isArray(value) ? value : [value]).map((v) => asciiLowercase(toPropertyString(v)))
      const positive = operator === 'icontains_multi'
      const anyIn = (v: unknown): boolean => {
        const hay = asciiLowercase(toPropertyString(v))
        return needles.some((n) => hay.includes(n))
      }
      return { match: positive ? anyIn : (v) => !anyIn(v), onMissing: !positive }
    }
    case 'regex':
    case 'not_regex':
      return compileRegexMatcher(operator, value)
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return compileNumeric(operator, value)
    case 'between':
    case 'not_between':
      return compileBetween(operator, value)
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      return compileDate(operator, value)
    case 'semver_eq':
    case 'semver_neq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
    case 'semver_tilde':
    case 'semver_caret':
    case 'semver_wildcard':
      return compileSemver(operator, value)
    case 'in':
    case 'not_in':
    case 'flag_evaluates_to':
      // Cohorts and flags are resolved by the caller (cohort matcher, flag engine), never here.
      return never
    default:
      return assertNever(operator)
  }
}

function compileExact(value: unknown): (v: unknown) => boolean {
  if (isTruthyOrFalsy(value)) {
    const truthy = isTruthy(value)
    return (v) => isTruthy(v) === truthy
  }
  if (Array.isArray(value)) {
    const set = new Set(value.map((item) => toPropertyString(item).toLowerCase()))
    return (v) => set.has(toPropertyString(v).toLowerCase())
  }
  const expected = toPropertyString(value).toLowerCase()
  return (v) => toPropertyString(v).toLowerCase() === expected
}

function compileText(operator: string, needle: string): ValueMatcher {
  const test =
    operator.endsWith('icontains') ? (hay: string) => hay.includes(needle)
    : operator.endsWith('starts_with') ? (hay: string) => hay.startsWith(needle)
    : (hay: string) => hay.endsWith(needle)
  if (operator.startsWith('not_')) return { match: (v) => !test(asciiLowercase(toPropertyString(v))), onMissing: true }
  return { match: (v) => test(asciiLowercase(toPropertyString(v))), onMissing: false }
}

function compileRegexMatcher(operator: string, value: unknown): ValueMatcher {
  const negate = operator === 'not_regex'
  const regex = compileRegex(toPropertyString(value))
  // An invalid pattern matches nothing, for both regex and not_regex (Rust `InvalidPattern`).
  if (regex === null) return { match: () => false, onMissing: negate }
  return { match: (v) => regex.test(toPropertyString(v)) !== negate, onMissing: negate }
}

/** Rust `to_f64_representation`: JSON numbers as-is, anything else parsed from its string form. */
function toNumber(value: unknown): number | undefined {
  return typeof value === 'number' ? value : parseRustFloat(toPropertyString(value))
}

function compileNumeric(operator: string, value: unknown): ValueMatcher {
  const expected = toNumber(value)
  if (expected === undefined) return never
  const compare =
    operator === 'gt' ? (a: number) => a > expected
    : operator === 'gte' ? (a: number) => a >= expected
    : operator === 'lt' ? (a: number) => a < expected
    : (a: number) => a <= expected
  return {
    match: (v) => {
      const actual = toNumber(v)
      return actual !== undefined && compare(actual)
    },
    onMissing: false,
  }
}

function compileBetween(operator: string, value: unknown): ValueMatcher {
  if (!Array.isArray(value) || value.length !== 2) return never
  const low = toNumber(value[0])
  const high = toNumber(value[1])
  if (low === undefined || high === undefined || Number.isNaN(low) || Number.isNaN(high) || low > high) return never
  const inside = operator === 'between'
  return {
    match: (v) => {
      const actual = toNumber(v)
      if (actual === undefined || Number.isNaN(actual)) return false
      return (actual >= low && actual <= high) === inside
    },
    onMissing: !inside,
  }
}

function compileDate(operator: string, value: unknown): ValueMatcher {
  const date = parseFilterDate(value)
  if (date === null) return never
  return {
    match: (v, now) => {
      const actual = parsePropertyDate(v, now)
      if (Number.isNaN(actual)) return false
      const expected = resolveFilterDate(date, now)
      if (operator === 'is_date_before') return actual < expected
      if (operator === 'is_date_after') return actual > expected
      return actual === expected
    },
    onMissing: false,
  }
}

function compileSemver(operator: string, value: unknown): ValueMatcher {
  const text = toPropertyString(value)
  let range: SemverRange | null = null
  if (operator === 'semver_tilde') range = tildeRange(text)
  else if (operator === 'semver_caret') range = caretRange(text)
  else if (operator === 'semver_wildcard') range = wildcardRange(text)
  else {
    const expected = parseSemver(text)
    const test = semverComparison(operator)
    if (expected === null || test === null) return never
    return {
      match: (v) => {
        const actual = parseSemver(toPropertyString(v))
        return actual !== null && test(compareSemver(actual, expected))
      },
      onMissing: false,
    }
  }
  if (range === null) return never
  const bounds = range
  return {
    match: (v) => {
      const actual = parseSemver(toPropertyString(v))
      return actual !== null && isInSemverRange(actual, bounds)
    },
    onMissing: false,
  }
}

function semverComparison(operator: string): ((c: number) => boolean) | null {
  switch (operator) {
    case 'semver_eq':
      return (c) => c === 0
    case 'semver_neq':
      return (c) => c !== 0
    case 'semver_gt':
      return (c) => c > 0
    case 'semver_gte':
      return (c) => c >= 0
    case 'semver_lt':
      return (c) => c < 0
    case 'semver_lte':
      return (c) => c <= 0
    default:
      return null
  }
}
