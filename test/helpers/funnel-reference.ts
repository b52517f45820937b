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

/** Unordered: at each event, the distinct steps done within the window before it; the first best. */
function refUnordered(evs: Ev[], o: RefOptions): RefResult | null {
  let best: RefResult | null = null
  for (const end of evs) {
    if (!o.steps.includes(end.event)) continue
    const firsts = o.steps.map((s) => evs.find((e) => e.event === s && e.t <= end.t && end.t - e.t <= o.windowMs)?.t).filter((t): t is number => t !== undefined)
    if (!best || firsts.length - 1 > best.level) best = { level: firsts.length - 1, times: firsts.sort((a, b) => a - b) }
  }
  return best
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

