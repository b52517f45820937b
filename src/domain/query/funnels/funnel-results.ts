import { rangeKeys } from '../bucket-keys.ts'
import { bucketDay, bucketLabel, type ResolvedRange } from '../date-range.ts'
import type { Series } from '../trends-query.ts'
import { breakdownParts } from '../trends-results.ts'

/** Shapes the funnel plans' rows as PostHog's `FunnelsQuery` results. Counts come from the store; this only arranges them. */

export interface FunnelStepName {
  series: Series
  /** The action's name for an action step. */
  actionName: string | null
}

const seconds = (ms: unknown): number | null => (ms === null || ms === undefined ? null : Number(ms) / 1000)

/** One step list (PostHog's `FunnelStepsResults`), for one breakdown value or for everyone. */
export function shapeSteps(row: Record<string, unknown> | undefined, names: readonly FunnelStepName[], opts: { breakdownValue?: string; multiple?: boolean; unordered?: boolean } = {}) {
  const { breakdownValue, multiple = false, unordered = false } = opts
  return names.map(({ series, actionName }, k) => {
    // Unordered funnels count how many of the steps were done, in any order (PostHog's FunnelUnordered._serialize_step).
    const named = unordered
      ? { action_id: null, name: `Completed ${k + 1} step${k === 0 ? '' : 's'}`, custom_name: null }
      : {
          action_id: series.kind === 'ActionsNode' ? series.actionId : series.event,
          name: series.kind === 'ActionsNode' ? (actionName ?? series.name) : (series.event ?? 'All events'),
          custom_name: series.customName,
        }
    const step: Record<string, unknown> = {
      ...named,
      order: k,
      people: [],
      count: row ? Number(row[`count_${k}`] ?? 0) : 0,
      type: series.kind === 'ActionsNode' ? 'actions' : 'events',
      average_conversion_time: k === 0 || !row ? null : seconds(row[`avg_${k}`]),
      median_conversion_time: k === 0 || !row ? null : seconds(row[`median_${k}`]),
      converted_people_url: null,
      dropped_people_url: null,
    }
    if (breakdownValue !== undefined) {
      step.breakdown = multiple ? breakdownParts(breakdownValue) : [breakdownValue]
      step.breakdown_value = step.breakdown
    }
    return step
  })
}

/** Histogram bin count when the query names none: the cube root of the persons (1 to 60), PostHog's rule. */
export function defaultBinCount(persons: number): number {
  return Math.min(60, Math.max(1, Math.ceil(Math.cbrt(persons))))
}

/** Bin width in whole seconds (at least one) spanning `[minMs, maxMs]` in `bins` bins. */
export function binWidthMs(minMs: number, maxMs: number, bins: number): number {
  return Math.max(1, Math.ceil((maxMs - minMs) / 1000 / bins)) * 1000
}

/** PostHog's time-to-convert result: `bins` of `[seconds from, persons]` from the fastest, every bin present. */
export function shapeTimeToConvert(rows: readonly Record<string, unknown>[], minMs: number, widthMs: number, avgMs: number | null) {
  const counts = new Map(rows.map((r) => [Number(r.bin), Number(r.persons)]))
  const last = Math.max(0, ...counts.keys())
  const bins = Array.from({ length: last + 1 }, (_, i) => [(minMs + i * widthMs) / 1000, counts.get(i) ?? 0])
  return { bins, average_conversion_time: seconds(avgMs) }
}

/**
 * PostHog's funnel trends: one series of conversion rates (%) per entry interval of the range; with
 * a breakdown, one series per value (rows carrying `value`), in the order of `values`.
 */
export function shapeConversionTrends(rows: readonly Record<string, unknown>[], range: ResolvedRange, breakdown?: { values: readonly string[]; multiple: boolean }) {
  if (!breakdown) return [conversionSeries(rows, range)]
  return breakdown.values.map((v) => {
    const value = breakdown.multiple ? breakdownParts(v) : [v]
    return { ...conversionSeries(rows.filter((r) => String(r.value) === v), range), breakdown_value: value }
  })
}

function conversionSeries(rows: readonly Record<string, unknown>[], range: ResolvedRange) {
  const byKey = new Map(rows.map((r) => [Number(r.k), r]))
  const perBucket = rangeKeys(range).map((key) => byKey.get(key))
  const data = perBucket.map((r) => {
    const entered = Number(r?.entered ?? 0)
    return entered === 0 ? 0 : Math.round((Number(r!.converted) / entered) * 10_000) / 100
  })
  return {
    count: data.length,
    data,
    days: range.buckets.map((b) => bucketDay(b, range.interval, range.timeZone)),
    labels: range.buckets.map((b) => bucketLabel(b, range.interval, range.timeZone)),
    reached_from_step_count: perBucket.map((r) => Number(r?.entered ?? 0)),
    reached_to_step_count: perBucket.map((r) => Number(r?.converted ?? 0)),
  }
}
