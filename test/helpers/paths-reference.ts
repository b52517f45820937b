// PostHog's paths runner (posthog/hogql_queries/insights/paths/paths_query_runner.py) redone in plain
// JS over arrays, the way its ClickHouse query works per person: the reference the paths e2e tests
// compare Tally's set-based plans with. Written from the runner's description, not from Tally's code.

export interface RefEvent { person: string; t: number; event: string; props: Record<string, unknown>; uid: string }
export interface RefFilter {
  includeEventTypes?: string[]
  excludeEvents?: string[]
  startPoint?: string
  endPoint?: string
  pathGroupings?: string[]
  cleaning?: Array<{ regex: string; alias: string }>
  stepLimit?: number
  edgeLimit?: number
  minEdgeWeight?: number
  maxEdgeWeight?: number
}
export interface RefEdge { source: string; target: string; value: number; average_conversion_time: number }
interface Step { person: string; pos: number; item: string; prev: string | null; dt: number; last: number }

const escape = (g: string) => g.replace(/[\\^$.|?*+()[\]{}\-/]/g, (c) => `\\${c}`).replace(/\\\*/g, '.*')

function pathItem(e: RefEvent, f: RefFilter): string {
  const types = f.includeEventTypes ?? []
  const reads = (ev: string) => (types.length === 0 ? !(f.excludeEvents ?? []).includes(ev) : types.includes(ev))
  let item: unknown = e.event
  if (reads('$pageview') && e.event === '$pageview') item = String(e.props.$current_url ?? '').replace(/(.)\/$/, '$1')
  if (reads('$screen') && e.event === '$screen') item = e.props.$screen_name ?? null
  let s = item === null || item === undefined ? '' : String(item)
  for (const r of f.cleaning ?? []) s = s.replace(new RegExp(r.regex, 'g'), r.alias.replace(/\\(\d)/g, '$$$1'))
  const g = (f.pathGroupings ?? []).find((x) => new RegExp(escape(x)).test(s))
  return g ?? s
}

function wanted(e: RefEvent, item: string, f: RefFilter): boolean {
  const types = f.includeEventTypes ?? []
  if (types.length === 0) return true
  const typeOk = (types.includes('$pageview') && e.event === '$pageview') || (types.includes('$screen') && e.event === '$screen') || (types.includes('custom_event') && !e.event.startsWith('$'))
  return typeOk && !(f.excludeEvents ?? []).includes(item)
}

/** Each person's limited paths as PostHog cuts them, one entry per path step. */
export function refSteps(events: readonly RefEvent[], f: RefFilter): Step[] {
  const limit = f.stepLimit || 5
  const byPerson = new Map<string, Array<{ t: number; item: string; uid: string }>>()
  for (const e of events) {
    const item = pathItem(e, f)
    if (!wanted(e, item, f)) continue
    byPerson.set(e.person, [...(byPerson.get(e.person) ?? []), { t: e.t, item, uid: e.uid }])
  }
  const out: Step[] = []
  for (const [person, list] of byPerson) {
    list.sort((a, b) => a.t - b.t || (a.uid < b.uid ? -1 : 1))
    const sessions: Array<typeof list> = []
    for (const [i, x] of list.entries()) {
      if (i === 0 || x.t - list[i - 1]!.t >= 30 * 60_000) sessions.push([])
      sessions[sessions.length - 1]!.push(x)
    }
    for (const session of sessions) {
      const compact = session.filter((x, i) => x.item !== (session[i + 1]?.item ?? ''))
      let path = compact.map((x) => x.item)
      let times = compact.map((x) => x.t)
      const h = Math.floor(limit / 2)
      if (f.startPoint && f.endPoint) {
        const s = path.indexOf(f.startPoint)
        if (s < 0) continue
        path = path.slice(s)
        times = times.slice(s)
        const e = path.indexOf(f.endPoint)
        if (e < 0) continue
        path = path.slice(0, e + 1)
        times = times.slice(0, e + 1)
        if (path.length > limit) {
          const tail = h === 0 ? [] : path.slice(-h)
          const tailT = h === 0 ? [] : times.slice(-h)
          times = [...times.slice(0, h), times[h]!, ...tailT]
          path = [...path.slice(0, h), '...', ...tail]
        }
      } else {
        const raw = f.endPoint ?? f.startPoint
        const target = raw && raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw
        if (target) {
          const at = path.indexOf(target)
          if (at < 0) continue
          if (f.endPoint) {
            path = path.slice(0, at + 1).slice(-limit)
            times = times.slice(0, at + 1).slice(-limit)
          } else {
            path = path.slice(at, at + limit)
            times = times.slice(at, at + limit)
          }
        } else {
          path = path.slice(0, limit)
          times = times.slice(0, limit)
        }
      }
      for (const [i, item] of path.entries()) out.push({ person, pos: i + 1, item, prev: i > 0 ? path[i - 1]! : null, dt: i > 0 ? times[i]! - times[i - 1]! : 0, last: path.length })
    }
  }
  return out
}

/** The edges PostHog answers: counted, averaged, weight-bounded, ordered, limited, reachable from `1_`. */
export function refPaths(events: readonly RefEvent[], f: RefFilter): RefEdge[] {
  const edges = new Map<string, { source: string; target: string; n: number; sum: number }>()
  for (const s of refSteps(events, f)) {
    if (s.pos < 2) continue
    const source = `${s.pos - 1}_${s.prev}`
    const target = `${s.pos}_${s.item}`
    const e = edges.get(`${source}\u0000${target}`) ?? { source, target, n: 0, sum: 0 }
    e.n++
    e.sum += s.dt
    edges.set(`${source}\u0000${target}`, e)
  }
  const cmp = (a: string, b: string) => (Buffer.from(a) < Buffer.from(b) ? -1 : a === b ? 0 : 1)
  const rows = [...edges.values()]
    .filter((e) => (!f.minEdgeWeight || e.n >= f.minEdgeWeight) && (!f.maxEdgeWeight || e.n <= f.maxEdgeWeight))
    .sort((a, b) => b.n - a.n || cmp(a.source, b.source) || cmp(a.target, b.target))
    .slice(0, f.edgeLimit || 50)
  const next = new Map<string, string[]>()
  for (const r of rows) next.set(r.source, [...(next.get(r.source) ?? []), r.target])
  const seen = new Set<string>()
  const stack = rows.filter((r) => r.source.startsWith('1_')).map((r) => r.source)
  while (stack.length) {
    const n = stack.pop()!
    seen.add(n)
    for (const t of next.get(n) ?? []) if (!seen.has(t)) stack.push(t)
  }
  return rows.filter((r) => seen.has(r.source)).map((r) => ({ source: r.source, target: r.target, value: r.n, average_conversion_time: r.sum / r.n }))
}

/** The persons behind an edge or a drop-off (PostHog's paths actors query), sorted. */
export function refActors(events: readonly RefEvent[], f: RefFilter, keys: { start?: string; end?: string; dropoff?: string }): string[] {
  return [...refActorCounts(events, f, keys).keys()].sort()
}

/** Each such person with the number of their path steps that match (PostHog's `event_count`). */
export function refActorCounts(events: readonly RefEvent[], f: RefFilter, keys: { start?: string; end?: string; dropoff?: string }): Map<string, number> {
  const persons = new Map<string, number>()
  for (const s of refSteps(events, f)) {
    const target = `${s.pos}_${s.item}`
    const source = s.pos > 1 ? `${s.pos - 1}_${s.prev}` : null
    const ok = keys.dropoff ? s.pos === s.last && target === keys.dropoff : (!keys.start || source === keys.start) && (!keys.end || target === keys.end)
    if (ok) persons.set(s.person, (persons.get(s.person) ?? 0) + 1)
  }
  return persons
}
