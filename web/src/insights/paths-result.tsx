import { useMemo } from 'react'
import type { PersonsOpener } from './actors.ts'
import { Chart } from './chart.tsx'
import { humanDuration, num } from './format.ts'

/** One edge of a paths result (PostHog's `{source, target, value, average_conversion_time}`; nodes `<step>_<item>`). */
export interface PathEdge { source: string; target: string; value: number; average_conversion_time: number }

/** A node's item without its step (`2_https://a.test/x` → `https://a.test/x`). */
const itemOf = (node: string) => node.replace(/^\d+_/, '')
const stepOf = (node: string) => Number(node.match(/^(\d+)_/)?.[1] ?? 0)
/** A node as the chart labels it: the URL's path when the item is a URL, cut to fit. */
function shortLabel(node: string): string {
  const item = itemOf(node)
  const url = /^https?:\/\/[^/]+(\/.*)?$/.exec(item)
  const text = url ? url[1] || '/' : item || '(empty)'
  return text.length > 28 ? `${text.slice(0, 27)}…` : text
}

/** Items as the table shows them: URLs without their origin when every URL has the same one (said above the table). */
function tableItems(edges: PathEdge[]): { show: (node: string) => string; origin: string | null } {
  const origins = new Set(edges.flatMap((e) => [e.source, e.target]).map((n) => /^(https?:\/\/[^/]+)(\/.*)?$/.exec(itemOf(n))?.[1]).filter(Boolean))
  const origin = origins.size === 1 ? [...origins][0]! : null
  return { origin, show: (node) => { const item = itemOf(node); return origin && item.startsWith(origin) ? item.slice(origin.length) || '/' : item || '(empty)' } }
}

/**
 * PostHog's paths insight: a Sankey of the steps persons took (a column per step) and the same
 * edges as a table. A click on a link, or a row's button, lists the persons who walked it.
 */
export function PathsResult({ edges, small, persons }: { edges: PathEdge[]; small?: boolean; persons?: PersonsOpener }) {
  const option = useMemo(() => {
    const nodes = [...new Set(edges.flatMap((e) => [e.source, e.target]))]
    return {
      tooltip: { trigger: 'item', confine: true },
      series: [{
        type: 'sankey', left: 8, right: 96, top: 8, bottom: 8, nodeAlign: 'left', nodeGap: 10, draggable: false,
        emphasis: { focus: 'adjacency' },
        lineStyle: { color: 'source', opacity: 0.35, curveness: 0.5 },
        label: { fontSize: 11, formatter: (p: { name: string }) => shortLabel(p.name) },
        data: nodes.map((name) => ({ name, depth: stepOf(name) - 1 })),
        links: edges.map((e) => ({ source: e.source, target: e.target, value: e.value })),
        tooltip: {
          formatter: (p: { dataType: string; name: string; data: { source?: string; target?: string; value?: number } }) =>
            p.dataType === 'edge' ? `${itemOf(p.data.source!)} → ${itemOf(p.data.target!)}: ${num(p.data.value)}` : itemOf(p.name),
        },
      }],
    }
  }, [edges])
  const open = (e: PathEdge) => persons?.open({
    title: `${itemOf(e.source)} → ${itemOf(e.target)} (step ${stepOf(e.source)} to ${stepOf(e.target)})`,
    source: { kind: 'InsightActorsQuery', source: { ...persons.query, pathsFilter: { ...(persons.query.pathsFilter as object), pathStartKey: e.source, pathEndKey: e.target } } },
  })
  const items = tableItems(edges)
  const onPick = persons && ((at: { dataIndex: number; dataType?: string }) => {
    if (at.dataType === 'edge' && edges[at.dataIndex]) open(edges[at.dataIndex]!)
  })
  return (
    <>
      <Chart option={option} label="Paths chart" small={small} className="sankey" onPick={onPick} />
      {persons && <p className="hint">Click a link to see the persons who took it.</p>}
      {!small && (
        <div className="table-wrap" tabIndex={0} role="region" aria-label="Path steps">
          {items.origin && <p className="hint">Pages of {items.origin}</p>}
          <table aria-label="Paths" className="paths-table">
            <thead><tr><th>Step</th><th>From</th><th>To</th><th className="num">Times taken</th><th className="num avg">Average time</th>{persons && <th><span className="sr-only">Persons</span></th>}</tr></thead>
            <tbody>
              {edges.map((e) => (
                <tr key={`${e.source}\u0000${e.target}`}>
                  <td className="num step">{stepOf(e.source)} → {stepOf(e.target)}</td>
                  <td className="mono" title={itemOf(e.source)}>{items.show(e.source)}</td>
                  <td className="mono" title={itemOf(e.target)}>{items.show(e.target)}</td>
                  <td className="num">{num(e.value)}</td>
                  <td className="num avg">{humanDuration(e.average_conversion_time / 1000)}</td>
                  {persons && <td><button type="button" className="btn small" aria-label={`Persons from ${itemOf(e.source)} to ${itemOf(e.target)}, step ${stepOf(e.source)}`} onClick={() => open(e)}>Persons</button></td>}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  )
}
