import { useEffect, useRef } from 'react'
import * as echarts from 'echarts/core'
import { BarChart, LineChart, SankeyChart } from 'echarts/charts'
import { DatasetComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components'
import { CanvasRenderer } from 'echarts/renderers'
import type { EChartsCoreOption } from 'echarts/core'
import type { ChartPick } from '../insights/actors.ts'

// Only what Tally draws: this chunk is loaded by the first page that shows a chart.
echarts.use([LineChart, BarChart, SankeyChart, GridComponent, TooltipComponent, LegendComponent, DatasetComponent, CanvasRenderer])

export const PALETTE = ['#1d4aff', '#f54e00', '#43a047', '#a621c8', '#f7a501', '#0096c7', '#e91e63', '#6d4c41']

export interface EChartProps {
  option: EChartsCoreOption
  label: string
  small?: boolean
  /** Called with the bar or point clicked. */
  onPick?: (pick: ChartPick) => void
  /**
   * Line charts: a click anywhere in the plot picks the column under it and the shown series whose
   * point there is nearest (as PostHog's line graph does), not only a hit on the thin line itself.
   */
  pickColumn?: boolean
  /** More classes for the chart's box (its height: `sankey`). */
  className?: string
}

/** One ECharts instance bound to a div; resized with its container, disposed on unmount. */
export default function EChart({ option, label, small, onPick, pickColumn, className }: EChartProps) {
  const ref = useRef<HTMLDivElement>(null)
  const chart = useRef<echarts.ECharts | null>(null)
  // The handlers are bound once; they read the latest props through these.
  const pick = useRef({ onPick, pickColumn })
  pick.current = { onPick, pickColumn }
  useEffect(() => {
    const c = echarts.init(ref.current!)
    chart.current = c
    c.on('click', (p) => {
      const { onPick: handler, pickColumn: byColumn } = pick.current
      if (handler && !byColumn && p.componentType === 'series' && typeof p.dataIndex === 'number') handler({ seriesIndex: p.seriesIndex ?? 0, dataIndex: p.dataIndex, ...(p.dataType === 'edge' || p.dataType === 'node' ? { dataType: p.dataType } : {}) })
    })
    const zr = c.getZr()
    zr.on('click', (e) => {
      const { onPick: handler, pickColumn: byColumn } = pick.current
      if (!handler || !byColumn) return
      const found = nearestPoint(c, [e.offsetX, e.offsetY])
      if (found) handler(found)
    })
    zr.on('mousemove', (e) => {
      if (pick.current.onPick && pick.current.pickColumn && c.containPixel('grid', [e.offsetX, e.offsetY])) zr.setCursorStyle('pointer')
    })
    const observer = new ResizeObserver(() => c.resize())
    observer.observe(ref.current!)
    return () => {
      observer.disconnect()
      c.dispose()
    }
  }, [])
  useEffect(() => {
    chart.current?.setOption({ color: PALETTE, animation: false, ...option }, true)
  }, [option])
  return <div ref={ref} className={chartClass(small, className)} role="img" aria-label={label} />
}

interface SeriesOption { name?: string; data?: unknown[] }

/** The column under a pixel of the plot and the shown series whose point in it is nearest vertically. */
function nearestPoint(c: echarts.ECharts, at: [number, number]): ChartPick | null {
  if (!c.containPixel('grid', at)) return null
  const opt = c.getOption() as { series?: SeriesOption[]; legend?: { selected?: Record<string, boolean> }[] }
  const series = opt.series ?? []
  const columns = Math.max(0, ...series.map((s) => s.data?.length ?? 0))
  if (columns === 0) return null
  const [x] = c.convertFromPixel({ gridIndex: 0 }, at) as number[]
  const dataIndex = Math.min(columns - 1, Math.max(0, Math.round(x)))
  const selected = opt.legend?.[0]?.selected ?? {}
  let best: ChartPick | null = null
  let bestDistance = Infinity
  series.forEach((s, seriesIndex) => {
    const value = Number(s.data?.[dataIndex])
    if (selected[s.name ?? ''] === false || !Number.isFinite(value)) return
    const [, y] = c.convertToPixel({ seriesIndex }, [dataIndex, value]) as number[]
    const distance = Math.abs(y - at[1])
    if (distance < bestDistance) {
      bestDistance = distance
      best = { seriesIndex, dataIndex }
    }
  })
  return best
}

/** The chart box's classes (shared with the placeholder shown while ECharts loads). */
export function chartClass(small?: boolean, className?: string): string {
  return [small ? 'chart small' : 'chart', className].filter(Boolean).join(' ')
}
