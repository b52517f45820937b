import { bucketDay, bucketLabel, type ResolvedRange } from './date-range.ts'
import { evaluateFormula, type Formula } from './formula.ts'
import { rangeKeys } from './bucket-keys.ts'
import { BREAKDOWN_PART_SEPARATOR, type Series } from './trends-query.ts'

/** One aggregated row of a series plan. */
export interface SeriesRow {
  bucket: number
  breakdown_value: string
  value: number | null
}

/** A trends result series with PostHog's keys. */
export type TrendsResult = Record<string, unknown> & { data: number[]; breakdown_value?: string | string[]; aggregated_value?: number; label: string; count: number }

export function seriesLabel(series: Series, actionName: string | null): string {
  if (series.customName) return series.customName
  if (series.kind === 'ActionsNode') return actionName ?? series.name ?? `Action ${series.actionId}`
  return series.event ?? 'All events'
}

/** PostHog's `action` object of a result: which series it is and how it was counted. */
export function actionJson(series: Series, order: number, label: string) {
  return {
    id: series.kind === 'ActionsNode' ? series.actionId : series.event,
    type: series.kind === 'ActionsNode' ? 'actions' : 'events',
    order,
    name: label,
    custom_name: series.customName,
    math: series.math,
    math_property: series.mathProperty,
    math_hogql: null,
    math_group_type_index: series.mathGroupTypeIndex,
    properties: Array.isArray(series.raw.properties) ? series.raw.properties : [],
  }
}

/** A multiple breakdown's value as PostHog lists it: one entry per part. */
export function breakdownParts(value: string): string[] {
  return value.split(BREAKDOWN_PART_SEPARATOR)
}

/** PostHog's "other" row: the value, or for a multiple breakdown a list holding it. */
export function isOtherBreakdown(value: unknown, other: string): boolean {
  return value === other || (Array.isArray(value) && value.includes(other))
}

/** A breakdown value as it appears in a series label (`a::b` for a multiple breakdown, as PostHog's). */
function breakdownLabel(value: string | string[]): string {
  return Array.isArray(value) ? value.join('::') : value
}

const round = (v: number | null): number => (v === null || !Number.isFinite(v) ? 0 : v)

/**
 * The store's rows of one series shaped as PostHog's results: one result per breakdown value (in
 * `breakdownOrder`), each bucket of the range present (0 where the store had no row).
 */
export function shapeSeries(opts: {
  series: Series
  order: number
  label: string
  rows: readonly SeriesRow[]
  range: ResolvedRange
  breakdownOrder: readonly string[] | null
  aggregated: boolean
  compareLabel?: 'current' | 'previous'
  /** Rows are running totals at the keys where they change (rolling windows): carry each forward. */
  carryForward?: boolean
  /** A multiple breakdown: each value is the list of its parts' values. */
  multipleBreakdown?: boolean
  /**
   * How many series the query has. PostHog labels a breakdown result by its value alone when there
   * is one series (`Chrome`), and `<series> - <value>` when there are several.
   */
  seriesCount: number
}): TrendsResult[] {
  const { range, series } = opts
  const days = range.buckets.map((b) => bucketDay(b, range.interval, range.timeZone))
  const labels = range.buckets.map((b) => bucketLabel(b, range.interval, range.timeZone))
  const keys = rangeKeys(range)
  const index = new Map(keys.map((k, i) => [k, i]))
  const byValue = new Map<string, SeriesRow[]>()
  for (const r of opts.rows) byValue.set(r.breakdown_value, [...(byValue.get(r.breakdown_value) ?? []), r])
  const values = opts.breakdownOrder ?? ['']
  return values.map((value) => {
    const rows = byValue.get(value) ?? []
    const compare = opts.compareLabel ? { compare: true, compare_label: opts.compareLabel } : {}
    const shown = opts.multipleBreakdown ? breakdownParts(value) : value
    const label = !opts.breakdownOrder ? opts.label : opts.seriesCount > 1 ? `${opts.label} - ${breakdownLabel(shown)}` : breakdownLabel(shown)
    const common = { action: actionJson(series, opts.order, opts.label), label, ...compare, ...(opts.breakdownOrder ? { breakdown_value: shown } : {}), filter: {} }
    if (opts.aggregated) {
      // PostHog's total-value shape: no buckets (`days: []`, no `labels`), `count` 0, the number in `aggregated_value`.
      return { ...common, aggregated_value: round(rows[0]?.value ?? 0), count: 0, data: [], days: [] }
    }
    const data = range.buckets.map(() => 0)
    if (opts.carryForward) {
      const sorted = [...rows].sort((a, b) => a.bucket - b.bucket)
      let at = -1
      keys.forEach((k, i) => {
        while (at + 1 < sorted.length && sorted[at + 1]!.bucket <= k) at++
        data[i] = at >= 0 ? round(sorted[at]!.value) : 0
      })
    } else {
      for (const r of rows) {
        const i = index.get(r.bucket)
        if (i !== undefined) data[i] = round(r.value)
      }
    }
    return { ...common, data, days, labels, count: data.reduce((a, b) => a + b, 0) }
  })
}

/**
 * Results combined by a formula: one result per breakdown value (and compare period), its data the
 * formula over the series' values at each point. Series missing a breakdown value count as 0.
 */
export function applyFormula(results: TrendsResult[][], formula: Formula, text: string, aggregated: boolean): TrendsResult[] {
  const groups = new Map<string, Array<TrendsResult | undefined>>()
  results.forEach((perSeries, s) => {
    for (const r of perSeries) {
      const key = `${String(r.compare_label ?? '')}\u0000${JSON.stringify(r.breakdown_value ?? '')}`
      const slot = groups.get(key) ?? results.map(() => undefined)
      slot[s] = r
      groups.set(key, slot)
    }
  })
  return [...groups.values()].map((slot) => {
    const first = slot.find((r) => r !== undefined)!
    // PostHog labels every formula result `Formula (<text>)`, with or without a breakdown value.
    const base = { ...first, action: null, label: `Formula (${text})`, filter: {} }
    if (aggregated) {
      const value = evaluateFormula(formula, slot.map((r) => r?.aggregated_value ?? 0))
      return { ...base, aggregated_value: value, count: 0 }
    }
    const data = first.data.map((_, i) => evaluateFormula(formula, slot.map((r) => r?.data[i] ?? 0)))
    return { ...base, data, count: data.reduce((a, b) => a + b, 0) }
  })
}
