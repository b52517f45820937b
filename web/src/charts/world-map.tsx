import { useEffect, useRef } from 'react'
import * as echarts from 'echarts/core'
import { MapChart } from 'echarts/charts'
import { GeoComponent, TooltipComponent, VisualMapComponent } from 'echarts/components'
import { CanvasRenderer } from 'echarts/renderers'
import { feature } from 'topojson-client'
import type { GeometryCollection, Topology } from 'topojson-specification'
import countries from 'i18n-iso-countries'
import world from 'world-atlas/countries-110m.json'

// Its own chunk, loaded with the first world map: Natural Earth's countries at 1:110m (world-atlas,
// ISC; the data is public domain), ISO 3166 numeric ids mapped to the alpha-2 codes $geoip_country_code holds.
echarts.use([MapChart, GeoComponent, TooltipComponent, VisualMapComponent, CanvasRenderer])

const topology = world as unknown as Topology<{ countries: GeometryCollection<{ name: string }> }>
const shapes = feature(topology, topology.objects.countries)
// Antarctica has no visitors and takes a fifth of the map.
shapes.features = shapes.features.filter((f) => f.id !== '010')
// Rings that cross the antimeridian (Russia's far east, Fiji) would be drawn as lines across the whole
// map: those few islands and coasts are left out.
type Ring = number[][]
const crosses = (ring: Ring) => ring.some((p, i) => i > 0 && Math.abs(p[0]! - ring[i - 1]![0]!) > 180)
for (const f of shapes.features) {
  const g = f.geometry as { type: string; coordinates: Ring[] | Ring[][] }
  if (g.type === 'MultiPolygon') g.coordinates = (g.coordinates as Ring[][]).filter((polygon) => !polygon.some(crosses))
}
echarts.registerMap('world', shapes as unknown as Parameters<typeof echarts.registerMap>[1])

/** The map's name of a country (Natural Earth's) by alpha-2 code, and back. */
const nameByCode = new Map<string, string>()
const codeByName = new Map<string, string>()
for (const f of shapes.features) {
  const code = countries.numericToAlpha2(String(f.id))
  if (code && f.properties?.name) {
    nameByCode.set(code, f.properties.name)
    codeByName.set(f.properties.name, code)
  }
}

export interface WorldMapProps {
  /** Visitors by alpha-2 country code. */
  values: { code: string; value: number }[]
  label: string
  onPick?: (code: string) => void
}

/** Countries shaded by visitors; a click on one picks its code. */
export default function WorldMap({ values, label, onPick }: WorldMapProps) {
  const ref = useRef<HTMLDivElement>(null)
  const chart = useRef<echarts.ECharts | null>(null)
  const pick = useRef(onPick)
  pick.current = onPick
  useEffect(() => {
    const c = echarts.init(ref.current!)
    chart.current = c
    c.on('click', (p) => {
      const code = codeByName.get(String(p.name))
      if (code && pick.current) pick.current(code)
    })
    const observer = new ResizeObserver(() => c.resize())
    observer.observe(ref.current!)
    return () => {
      observer.disconnect()
      c.dispose()
    }
  }, [])
  useEffect(() => {
    const data = values.filter((v) => nameByCode.has(v.code)).map((v) => ({ name: nameByCode.get(v.code)!, value: v.value }))
    chart.current?.setOption({
      animation: false,
      tooltip: { trigger: 'item', formatter: (p: { name: string; value: number }) => `${p.name}: ${Number.isFinite(p.value) ? p.value : 0} visitors` },
      visualMap: { min: 0, max: Math.max(1, ...data.map((d) => d.value)), show: false, inRange: { color: ['#dbe4ff', '#1d4aff'] } },
      series: [{ type: 'map', map: 'world', roam: false, data, emphasis: { label: { show: false }, itemStyle: { areaColor: '#f54e00' } }, itemStyle: { areaColor: '#eef1f6', borderColor: '#c3cad4' }, nameProperty: 'name' }],
    }, true)
  }, [values])
  return <div ref={ref} className="chart world-map" role="img" aria-label={label} />
}
