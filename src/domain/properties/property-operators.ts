/**
 * The one table of property-filter operators PostHog's API accepts (flags, cohorts, actions,
 * insights, the events and persons APIs). Every list of operators in Tally derives from it: flag
 * and cohort validation (all of them), person filters and event SQL (`runsOn`), the events API's
 * value checks (`value`), the web app's editors (`label`). Every `switch` over operators ends in
 * `assertNever`, so an operator added here fails to compile wherever it is not implemented.
 *
 * Semantics are those of the domain matcher (`match-property.ts`, PostHog's flag matching); each
 * SQL implementation (event SQL per engine, person SQL) is checked against it by the conformance
 * and agreement suites.
 */
export const PROPERTY_OPERATORS = {
  exact: { label: 'equals', value: 'scalars', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'equals one of the values, compared as text, case-insensitively; true/false compare as booleans' },
  is_not: { label: "doesn't equal", value: 'scalars', negative: true, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'not exact (a missing key passes)' },
  is_set: { label: 'is set', value: 'none', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'the key is present (a JSON null counts)' },
  is_not_set: { label: 'is not set', value: 'none', negative: true, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'the key is absent' },
  icontains: { label: 'contains', value: 'text', negative: false, runsOn: { events: true, persons: true }, flagsWantString: true, semantics: 'a literal substring, A-Z folded (% and _ are plain characters)' },
  not_icontains: { label: "doesn't contain", value: 'text', negative: true, runsOn: { events: true, persons: true }, flagsWantString: true, semantics: 'not icontains (a missing key passes)' },
  icontains_multi: { label: 'contains any of', value: 'texts', negative: false, runsOn: { events: true, persons: false }, flagsWantString: false, semantics: 'icontains for at least one of the values' },
  not_icontains_multi: { label: 'contains none of', value: 'texts', negative: true, runsOn: { events: true, persons: false }, flagsWantString: false, semantics: 'icontains for none of the values (a missing key passes)' },
  starts_with: { label: 'starts with', value: 'text', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a literal prefix, A-Z folded' },
  not_starts_with: { label: "doesn't start with", value: 'text', negative: true, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'not starts_with (a missing key passes)' },
  ends_with: { label: 'ends with', value: 'text', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a literal suffix, A-Z folded' },
  not_ends_with: { label: "doesn't end with", value: 'text', negative: true, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'not ends_with (a missing key passes)' },
  regex: { label: 'matches regex', value: 'regex', negative: false, runsOn: { events: true, persons: true }, flagsWantString: true, semantics: 'an RE2 pattern found in the text; an invalid pattern matches nothing' },
  not_regex: { label: "doesn't match regex", value: 'regex', negative: true, runsOn: { events: true, persons: true }, flagsWantString: true, semantics: 'not regex (a missing key passes; an invalid pattern matches missing keys only)' },
  gt: { label: 'greater than', value: 'number', negative: false, runsOn: { events: true, persons: true }, flagsWantString: true, semantics: 'the text read as a number (Rust f64 grammar) above the value' },
  gte: { label: 'at least', value: 'number', negative: false, runsOn: { events: true, persons: true }, flagsWantString: true, semantics: 'as gt, or equal' },
  lt: { label: 'less than', value: 'number', negative: false, runsOn: { events: true, persons: true }, flagsWantString: true, semantics: 'the text read as a number below the value' },
  lte: { label: 'at most', value: 'number', negative: false, runsOn: { events: true, persons: true }, flagsWantString: true, semantics: 'as lt, or equal' },
  between: { label: 'between', value: 'range', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a number within [low, high]' },
  not_between: { label: 'not between', value: 'range', negative: true, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'not between (a missing key passes)' },
  is_date_before: { label: 'before', value: 'date', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a date (absolute or relative, -7d) strictly before' },
  is_date_after: { label: 'after', value: 'date', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a date strictly after' },
  is_date_exact: { label: 'on', value: 'date', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a date on the same instant' },
  semver_eq: { label: 'version =', value: 'semver', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a semantic version equal' },
  semver_neq: { label: 'version ≠', value: 'semver', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a semantic version not equal (a missing key fails)' },
  semver_gt: { label: 'version >', value: 'semver', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a semantic version above' },
  semver_gte: { label: 'version ≥', value: 'semver', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a semantic version at least' },
  semver_lt: { label: 'version <', value: 'semver', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a semantic version below' },
  semver_lte: { label: 'version ≤', value: 'semver', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'a semantic version at most' },
  semver_tilde: { label: 'version ~', value: 'semver', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'same major.minor, at least the patch' },
  semver_caret: { label: 'version ^', value: 'semver', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'compatible: same leftmost non-zero part, at least the version' },
  semver_wildcard: { label: 'version *', value: 'semver', negative: false, runsOn: { events: true, persons: true }, flagsWantString: false, semantics: 'matches a 1.2.* pattern' },
  in: { label: 'in cohort', value: 'cohort', negative: false, runsOn: { events: false, persons: false }, flagsWantString: false, semantics: 'the person is in the cohort (queries expand it before SQL)' },
  not_in: { label: 'not in cohort', value: 'cohort', negative: true, runsOn: { events: false, persons: false }, flagsWantString: false, semantics: 'the person is not in the cohort' },
  flag_evaluates_to: { label: 'flag evaluates to', value: 'flag', negative: false, runsOn: { events: false, persons: false }, flagsWantString: false, semantics: 'another flag of the project evaluates to the value (flags only)' },
} as const satisfies Record<string, OperatorSpec>

/** What a filter's `value` holds for an operator. */
export type OperatorValue = 'none' | 'scalars' | 'text' | 'texts' | 'regex' | 'number' | 'range' | 'date' | 'semver' | 'cohort' | 'flag'

export interface OperatorSpec {
  /** The web app's label (PostHog's wording). */
  label: string
  value: OperatorValue
  /** The `not_*`/`is_not` side: a filter on a missing key passes. */
  negative: boolean
  /** The stores that run it in SQL: event SQL (every engine) and person SQL (PostgreSQL/PGlite). */
  runsOn: { events: boolean; persons: boolean }
  /** PostHog's flag serializer wants a string value (`posthog/api/feature_flag.py`). */
  flagsWantString: boolean
  semantics: string
}

/** Operators PostHog accepts on a property filter (`exact` when absent). */
export type PropertyOperator = keyof typeof PROPERTY_OPERATORS

/** Every operator, in the table's order. */
export const OPERATORS: readonly PropertyOperator[] = Object.keys(PROPERTY_OPERATORS) as PropertyOperator[]

/** Every property-filter operator PostHog's API accepts (flags, cohorts, actions and insights). */
export const KNOWN_OPERATORS: ReadonlySet<string> = new Set(OPERATORS)

/** Operators event SQL compiles (every engine): all but the cohort and flag ones. */
export const EVENT_SQL_OPERATORS: readonly PropertyOperator[] = OPERATORS.filter((o) => PROPERTY_OPERATORS[o].runsOn.events)

/** Operators person SQL runs (PostgreSQL/PGlite persons API). */
export const PERSON_SQL_OPERATORS: ReadonlySet<string> = new Set(OPERATORS.filter((o) => PROPERTY_OPERATORS[o].runsOn.persons))

export function isPropertyOperator(op: unknown): op is PropertyOperator {
  return typeof op === 'string' && Object.hasOwn(PROPERTY_OPERATORS, op)
}

/** The end of an exhaustive switch: a value the types say cannot exist. */
export function assertNever(value: never): never {
  throw new Error(`unexpected ${JSON.stringify(value)}`)
}
