import { useEffect, useRef } from 'react'
import * as echarts from 'echarts/core'
import { BarChart, LineChart } from 'echarts/charts'
import { DatasetComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components'
import { CanvasRenderer } from 'echarts/renderers'
import type { EChartsCoreOption } from 'echarts/core'

// Only what Tally draws: this chunk is loaded by the first page that shows a chart.
echarts.use([LineChart, BarChart, GridComponent, TooltipComponent, LegendComponent, DatasetComponent, CanvasRenderer])

export const PALETTE = ['#1d4aff', '#f54e00', '#43a047', '#a621c8', '#f7a501', '#0096c7', '#e91e63', '#6d4c41']

/** One ECharts instance bound to a div; resized with its container, disposed on unmount. */
export default function EChart({ option, label, small }: { option: EChartsCoreOption; label: string; small?: boolean }) {
  const ref = useRef<HTMLDivElement>(null)
  const chart = useRef<echarts.ECharts | null>(null)
  useEffect(() => {
    chart.current = echarts.init(ref.current!)
    const observer = new ResizeObserver(() => chart.current?.resize())
    observer.observe(ref.current!)
    return () => {
      observer.disconnect()
      chart.current?.dispose()
    }
  }, [])
  useEffect(() => {
    chart.current?.setOption({ color: PALETTE, animation: false, ...option }, true)
  }, [option])
  return <div ref={ref} className={small ? 'chart small' : 'chart'} role="img" aria-label={label} />
}
