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
 * Unordered (PostHog's `AggregateFunnelRowUnordered`, its current Rust UDF), event by event over the
 * step and exclusion events: each step keeps a queue of its events; an event first drops the oldest
 * events out of the window (or all of them, one by one, once every step is done), recording the
 * steps done before each drop; an exclusion event then clears the queues without recording (the
 * attempt it interrupts is lost, earlier recorded progress stays); a step event joins the step whose
 * latest event is oldest. The last event records too. The result is the first record with the most
 * steps, its times the queues' oldest events, sorted.
 */
function refUnordered(evs: Ev[], o: RefOptions): RefResult | null {
  const n = o.steps.length
  const excluded = new Set((o.exclusions ?? []).map((x) => x.event))
  const all = evs.filter((e) => o.steps.includes(e.event) || excluded.has(e.event))
  let queues: Ev[][] = o.steps.map(() => [])
  let done = 0
  let best: { count: number; times: number[] } = { count: 0, times: [] }
  const record = () => {
    if (done > best.count) best = { count: done, times: queues.filter((q) => q.length > 0).map((q) => q[0]!.t).sort((a, b) => a - b) }
  }
  for (const [i, e] of all.entries()) {
    for (;;) {
      let oldest = -1
      queues.forEach((q, j) => {
        if (q.length > 0 && (oldest < 0 || q[0]!.t < queues[oldest]![0]!.t)) oldest = j
      })
      if (oldest < 0) break
      if (done < n && queues[oldest]![0]!.t + o.windowMs >= e.t) break
      record()
      queues[oldest]!.shift()
      if (queues[oldest]!.length === 0) done--
    }
    const steps = o.steps.flatMap((s, j) => (s === e.event ? [j] : []))
    if (steps.length === 0) {
      queues = o.steps.map(() => [])
      done = 0
    } else {
      const lastAt = (j: number) => queues[j]!.at(-1)?.t ?? 0
      const step = steps.reduce((a, j) => (lastAt(j) < lastAt(a) ? j : a))
      if (queues[step]!.length === 0) done++
      queues[step]!.push(e)
    }
    if (best.count === n) break
    if (i === all.length - 1) record()
  }
  return best.count === 0 ? null : { level: best.count - 1, times: best.times }
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

