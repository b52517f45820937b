// PostHog's per-person funnel matcher (its UDF `aggregate_funnel`, event by event: entered
// timestamps per step, latest entry kept, strict resets, exclusions, stop at the goal), in plain JS:
// the reference the funnel tests compare Tally's set-based SQL with.

export interface Ev { t: number; event: string; browser: string }
export interface Exclusion { event: string; from: number; to: number }
export interface RefOptions {
  steps: string[]
  windowMs: number
  order: 'ordered' | 'strict' | 'unordered'
  exclusions?: Exclusion[]
  /** Which events may enter (funnel trends: those of one interval). */
  entryFilter?: (e: Ev) => boolean
  /** Whether an event may complete the 0-based step (step attribution: only the value's events). */
  stepGate?: (step: number, e: Ev) => boolean
}
export interface RefResult { level: number; times: number[] }

/** PostHog's matcher for one person (0-based level; null when excluded or never entered). */
export function refFunnel(evs: Ev[], o: RefOptions): RefResult | null {
  if (o.order === 'unordered') return refUnordered(evs, o)
  const n = o.steps.length
  type Entered = { ts: number; timings: number[] }
  const none: Entered = { ts: 0, timings: [] }
  const entered: Entered[] = Array.from({ length: n + 1 }, () => none)
  let max: [number, Entered] = [0, none]
  for (const e of evs) {
    // Steps are 1-based as in the UDF; an exclusion between steps a and b checks steps a+2..b+1.
    const steps = o.steps.flatMap((s, i) => (s === e.event && (i > 0 || !o.entryFilter || o.entryFilter(e)) ? [i + 1] : []))
    const excl = (o.exclusions ?? []).filter((x) => x.event === e.event).flatMap((x) => Array.from({ length: x.to - x.from }, (_, d) => -(x.from + d + 2)))
    entered[0] = { ts: e.t, timings: [] }
    for (const raw of [...steps, ...excl].reverse()) {
      const step = Math.abs(raw)
      const inWindow = e.t - entered[step - 1]!.ts <= o.windowMs
      const already = entered[step]!.ts === entered[step - 1]!.ts
      if (!inWindow || already) continue
      if (raw < 0) return null
      if (o.stepGate && !o.stepGate(step - 1, e)) continue
      entered[step] = { ts: entered[step - 1]!.ts, timings: [...entered[step - 1]!.timings, e.t] }
      if (step > max[0]) max = [step, entered[step]!]
    }
    if (o.order === 'strict') for (let i = 0; i <= n; i++) if (!steps.includes(i)) entered[i] = none
    if (entered[n]!.ts > 0) break
  }
  return max[0] === 0 ? null : { level: max[0] - 1, times: max[1].timings }
}

/**
 * Unordered (PostHog's `AggregateFunnelRowUnordered`): at each event, the distinct steps done within
 * the window before it (each step's earliest); the first best. Excluded when an exclusion event falls
 * strictly between the best path's first and last step.
 */
function refUnordered(evs: Ev[], o: RefOptions): RefResult | null {
  let best: RefResult | null = null
  for (const end of evs) {
    if (!o.steps.includes(end.event)) continue
    const firsts = o.steps.map((s) => evs.find((e) => e.event === s && e.t <= end.t && end.t - e.t <= o.windowMs)?.t).filter((t): t is number => t !== undefined)
    if (!best || firsts.length - 1 > best.level) best = { level: firsts.length - 1, times: firsts.sort((a, b) => a - b) }
  }
  if (!best) return null
  const [first, last] = [best.times[0]!, best.times.at(-1)!]
  const excluded = (o.exclusions ?? []).some((x) => evs.some((e) => e.event === x.event && e.t > first && e.t < last))
  return excluded ? null : best
}

/**
 * Unordered funnel trends (PostHog's unordered trends matcher): every step event starts a path
 * reaching the distinct steps done within the window from it, dropped when an exclusion event comes
 * inside that window before the path completed. The furthest level per entry interval (`bucketOf`).
 */
export function refUnorderedEntries(evs: Ev[], o: RefOptions, bucketOf: (t: number) => number): Map<number, number> {
  const out = new Map<number, number>()
  for (const a of evs) {
    if (!o.steps.includes(a.event)) continue
    const inWindow = evs.filter((e) => e.t >= a.t && e.t <= a.t + o.windowMs)
    const firsts = o.steps.map((s) => inWindow.find((e) => e.event === s)?.t)
    const exclusion = inWindow.find((e) => e.t > a.t && (o.exclusions ?? []).some((x) => x.event === e.event))
    const completedBefore = exclusion !== undefined && firsts.every((t) => t !== undefined && t < exclusion.t)
    if (exclusion && !completedBefore) continue
    const level = firsts.filter((t) => t !== undefined).length - 1
    const k = bucketOf(a.t)
    out.set(k, Math.max(out.get(k) ?? -1, level))
  }
  return out
}

export function median(xs: number[]): number | null {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  const m = (s.length - 1) / 2
  return (s[Math.floor(m)]! + s[Math.ceil(m)]!) / 2
}
export const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null)

/** The steps result PostHog shows, from the reference's per-person answers. */
export function expectedSteps(results: RefResult[], n: number) {
  return Array.from({ length: n }, (_, k) => {
    const reached = results.filter((r) => r.level >= k)
    const secs = reached.map((r) => (r.times[k]! - r.times[k - 1]!) / 1000)
    return { count: reached.length, average_conversion_time: k === 0 ? null : mean(secs), median_conversion_time: k === 0 ? null : median(secs) }
  })
}

