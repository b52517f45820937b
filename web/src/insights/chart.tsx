import { lazy, Suspense } from 'react'
import type { EChartProps } from '../charts/echart.tsx'

// ECharts is its own chunk, loaded with the first chart a page shows.
const EChart = lazy(() => import('../charts/echart.tsx'))

/** A chart (role img, named by `label`), with a placeholder of its size while ECharts loads. */
export const Chart = (props: Omit<EChartProps, 'option'> & { option: Record<string, unknown> }) => (
  <Suspense fallback={<div className={[props.small ? 'chart small' : 'chart', props.className].filter(Boolean).join(' ')} />}><EChart {...props} /></Suspense>
)
