import { validationError } from '../../shared/errors.ts'

/**
 * Bounds on the work one query may ask for, each a 400 naming the field and the limit (a TrendsQuery
 * of 5,000 series took 33 s; the funnel's 20 steps and the breakdown limit's 1,000 were bounded before).
 */
export const QUERY_BOUNDS = {
  /** Series of one TrendsQuery, StickinessQuery or LifecycleQuery. */
  series: 100,
  /** Values of one property filter (`exact`/`is_not` with a list: SQL's IN-list). */
  filterValues: 1_000,
  /** Property filters in one list or group. */
  filters: 200,
} as const

/** A 400 naming `attr` when `list` holds more than `max` items. */
export function checkLength(list: readonly unknown[], max: number, attr: string, what: string): void {
  if (list.length > max) throw validationError(attr, `At most ${max} ${what} are allowed here, got ${list.length}.`, 'max_length')
}
