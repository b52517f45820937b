/** One edge of PostHog's paths result. */
export interface PathEdge {
  source: string
  target: string
  value: number
  /** Milliseconds, averaged over the walks of this edge. */
  average_conversion_time: number
}

/**
 * The edges as PostHog answers them (`validate_results`): only those reachable from a first-step
 * node (`1_…`) through the edges kept, in the query's order.
 */
export function shapePaths(rows: ReadonlyArray<Record<string, unknown>>): PathEdge[] {
  const edges = rows.map((r) => ({ source: String(r.source), target: String(r.target), value: Number(r.value), average_conversion_time: Number(r.avg_ms) }))
  const next = new Map<string, string[]>()
  const stack: string[] = []
  for (const e of edges) {
    next.set(e.source, [...(next.get(e.source) ?? []), e.target])
    if (e.source.startsWith('1_')) stack.push(e.source)
  }
  const seen = new Set<string>()
  while (stack.length) {
    const node = stack.pop()!
    seen.add(node)
    for (const t of next.get(node) ?? []) if (!seen.has(t)) stack.push(t)
  }
  return edges.filter((e) => seen.has(e.source))
}
