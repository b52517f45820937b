import { lazy, Suspense } from 'react'

// ECharts is its own chunk, loaded with the first chart a page shows.
const EChart = lazy(() => import('../charts/echart.tsx'))

/** A chart (role img, named by `label`), with a placeholder of its size while ECharts loads. */
export const Chart = (props: { option: Record<string, unknown>; label: string; small?: boolean }) => (
  <Suspense fallback={<div className={props.small ? 'chart small' : 'chart'} />}><EChart {...props} /></Suspense>
)
