import { lazy, Suspense, useEffect, useRef, useState, type RefObject } from 'react'
import { rowFilter, type BreakdownTab } from './breakdowns.ts'
import type { StatsTable } from './stats-rows.ts'
import type { WebFilter } from './web-filters.ts'

// The world map (ECharts' map and Natural Earth's shapes) is its own chunk.
const WorldMap = lazy(() => import('../charts/world-map.tsx'))

/** Visitors by country on a world map; a click on a country filters the page as its row does. */
export function CountryMap({ table, tab, onFilter }: { table: StatsTable; tab: BreakdownTab; onFilter: (f: WebFilter) => void }) {
  const values = table.rows.filter((r) => typeof r.value === 'string' && r.value !== '').map((r) => ({ code: String(r.value), value: r.visitors.current ?? 0 }))
  const label = `World map of visitors by country: ${values.map((v) => `${v.code} ${v.value}`).join(', ')}`
  // Loaded once the card scrolls into view: the map's 64 KB stay off the page's first load.
  const [ref, seen] = useSeen<HTMLDivElement>()
  if (!seen) return <div ref={ref} className="chart world-map" />
  return (
    <Suspense fallback={<div className="chart world-map" />}>
      <WorldMap values={values} label={label} onPick={(code) => onFilter(rowFilter(tab, code))} />
    </Suspense>
  )
}

/** True once the element has been in the viewport. */
function useSeen<T extends Element>(): [RefObject<T | null>, boolean] {
  const ref = useRef<T>(null)
  const [seen, setSeen] = useState(false)
  useEffect(() => {
    if (seen || !ref.current) return
    const observer = new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) setSeen(true) })
    observer.observe(ref.current)
    return () => observer.disconnect()
  }, [seen])
  return [ref, seen]
}
