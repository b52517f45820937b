import { Empty } from '../ui.tsx'
import { humanDuration, num, percent } from './format.ts'
import { Chart } from './chart.tsx'

/** One step of PostHog's `FunnelStepsResults` (per breakdown value when broken down). */
export interface FunnelStep {
  name?: string
  custom_name?: string | null
  order?: number
  count?: number
  average_conversion_time?: number | null
  median_conversion_time?: number | null
  breakdown_value?: unknown
}
/** PostHog's `FunnelTimeToConvertResults`: `[seconds from, persons]` per bin. */
interface TimeToConvert { bins?: [number, number][]; average_conversion_time?: number | null }
/** One series of PostHog's funnel trends: conversion % per entry interval. */
interface ConversionTrend { data?: number[]; days?: string[]; labels?: string[]; breakdown_value?: unknown }

type Json = Record<string, unknown>
const stepName = (s: FunnelStep, i: number) => `${i + 1}. ${s.custom_name || s.name || 'Step'}`
const valueName = (v: unknown) => (Array.isArray(v) ? v.join(', ') : v == null || v === '' ? '(none)' : String(v))
const DROPPED = '#d7dbe6'

/** A funnel's result drawn as its shape says: steps (per breakdown value), time to convert, or conversion trends. */
export function FunnelResult({ results, small }: { results: unknown; small?: boolean }) {
  if (Array.isArray(results)) {
    if (results.length === 0) return <Empty>No one entered this funnel in the range.</Empty>
    if (Array.isArray(results[0])) return <FunnelBreakdown values={results as FunnelStep[][]} small={small} />
    if ('data' in (results[0] as Json)) return <ConversionTrends series={results as ConversionTrend[]} small={small} />
    return <FunnelSteps steps={results as FunnelStep[]} small={small} />
  }
  return <TimeToConvertHistogram result={(results ?? {}) as TimeToConvert} small={small} />
}

/** Bars of persons per step, the ones lost since the previous step stacked in grey, conversion from the first on top. */
function FunnelSteps({ steps, small }: { steps: FunnelStep[]; small?: boolean }) {
  const counts = steps.map((s) => s.count ?? 0)
  const first = counts[0] ?? 0
  const dropped = counts.map((c, i) => (i === 0 ? 0 : Math.max(0, counts[i - 1] - c)))
  const option = {
    tooltip: { trigger: 'axis' },
    legend: { bottom: 0 },
    grid: { left: 48, right: 16, top: 28, bottom: 72 },
    xAxis: { type: 'category', data: steps.map(stepName), axisLabel: { interval: 0, width: 72, overflow: 'break' } },
    yAxis: { type: 'value', minInterval: 1 },
    series: [
      { name: 'Converted', type: 'bar', stack: 'funnel', data: counts },
      { name: 'Dropped off', type: 'bar', stack: 'funnel', data: dropped, itemStyle: { color: DROPPED },
        label: { show: true, position: 'top', formatter: (p: { dataIndex: number }) => percent(counts[p.dataIndex], first) } },
    ],
  }
  return (
    <>
      <Chart option={option} label="Funnel chart" small={small} />
      {!small && (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label="Funnel steps">
            <thead>
              <tr><th>Step</th><th className="num">Persons</th><th className="num">Conversion</th><th className="num">From previous</th><th className="num">Dropped off</th><th className="num">Avg. time</th><th className="num">Median time</th></tr>
            </thead>
            <tbody>
              {steps.map((s, i) => (
                <tr key={i}>
                  <td>{stepName(s, i)}</td>
                  <td className="num">{num(counts[i])}</td>
                  <td className="num">{percent(counts[i], first)}</td>
                  <td className="num">{i ? percent(counts[i], counts[i - 1]) : ''}</td>
                  <td className="num">{i ? `${num(dropped[i])} (${percent(dropped[i], counts[i - 1])})` : ''}</td>
                  <td className="num">{i ? humanDuration(s.average_conversion_time) : ''}</td>
                  <td className="num">{i ? humanDuration(s.median_conversion_time) : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  )
}

/** Grouped bars, one series per breakdown value, and a row per value with each step's persons and conversion. */
function FunnelBreakdown({ values, small }: { values: FunnelStep[][]; small?: boolean }) {
  const steps = values[0] ?? []
  const option = {
    tooltip: { trigger: 'axis' },
    legend: { type: 'scroll', bottom: 0 },
    grid: { left: 48, right: 16, top: 28, bottom: 72 },
    xAxis: { type: 'category', data: steps.map(stepName), axisLabel: { interval: 0, width: 72, overflow: 'break' } },
    yAxis: { type: 'value', minInterval: 1 },
    series: values.map((v) => {
      const first = v[0]?.count ?? 0
      return {
        name: valueName(v[0]?.breakdown_value), type: 'bar', data: v.map((s) => s.count ?? 0),
        label: { show: !small, position: 'top', formatter: (p: { value: number }) => percent(p.value, first) },
      }
    }),
  }
  return (
    <>
      <Chart option={option} label="Funnel chart by breakdown" small={small} />
      {!small && (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label="Funnel by breakdown">
            <thead>
              <tr><th>Breakdown value</th>{steps.map((s, i) => <th key={i} className="num">{stepName(s, i)}</th>)}<th className="num">Conversion</th></tr>
            </thead>
            <tbody>
              {values.map((v, r) => {
                const first = v[0]?.count ?? 0
                return (
                  <tr key={r}>
                    <td>{valueName(v[0]?.breakdown_value)}</td>
                    {v.map((s, i) => <td key={i} className="num">{num(s.count ?? 0)}{i ? ` (${percent(s.count ?? 0, first)})` : ''}</td>)}
                    <td className="num">{percent(v[v.length - 1]?.count ?? 0, first)}</td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  )
}

/** Persons by time taken to convert, binned from the fastest (PostHog's histogram). */
function TimeToConvertHistogram({ result, small }: { result: TimeToConvert; small?: boolean }) {
  const bins = result.bins ?? []
  if (bins.length === 0) return <Empty>No one converted in the range.</Empty>
  const width = bins.length > 1 ? bins[1][0] - bins[0][0] : 0
  const label = (from: number) => (width ? `${humanDuration(from)}–${humanDuration(from + width)}` : humanDuration(from))
  const option = {
    tooltip: { trigger: 'axis' },
    grid: { left: 48, right: 16, top: 16, bottom: 40 },
    xAxis: { type: 'category', data: bins.map(([from]) => humanDuration(from)), name: 'Time to convert', nameLocation: 'middle', nameGap: 26 },
    yAxis: { type: 'value', minInterval: 1 },
    series: [{ name: 'Persons', type: 'bar', data: bins.map(([, n]) => n), barCategoryGap: '4%' }],
  }
  return (
    <>
      <p className="muted">Average time to convert: <strong data-testid="average-conversion-time">{humanDuration(result.average_conversion_time)}</strong></p>
      <Chart option={option} label="Time to convert chart" small={small} />
      {!small && (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label="Time to convert">
            <thead><tr><th>Converted within</th><th className="num">Persons</th></tr></thead>
            <tbody>{bins.map(([from, n]) => <tr key={from}><td>{label(from)}</td><td className="num">{num(n)}</td></tr>)}</tbody>
          </table>
        </div>
      )}
    </>
  )
}

/** Conversion rate (%) of the persons who entered in each interval. */
function ConversionTrends({ series, small }: { series: ConversionTrend[]; small?: boolean }) {
  const labels = series[0]?.labels ?? series[0]?.days ?? []
  const name = (s: ConversionTrend) => (s.breakdown_value == null ? 'Conversion rate' : valueName(s.breakdown_value))
  const option = {
    tooltip: { trigger: 'axis', valueFormatter: (v: number) => `${v}%` },
    legend: { type: 'scroll', bottom: 0 },
    grid: { left: 48, right: 16, top: 16, bottom: 48 },
    xAxis: { type: 'category', data: labels },
    yAxis: { type: 'value', min: 0, max: 100, axisLabel: { formatter: '{value}%' } },
    series: series.map((s) => ({ name: name(s), type: 'line', data: s.data ?? [], showSymbol: true })),
  }
  return (
    <>
      <Chart option={option} label="Conversion trends chart" small={small} />
      {!small && (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label="Conversion by period">
            <thead><tr><th>Entered</th>{series.map((s, i) => <th key={i} className="num">{name(s)}</th>)}</tr></thead>
            <tbody>{labels.map((l, i) => <tr key={i}><td>{l}</td>{series.map((s, j) => <td key={j} className="num">{`${(s.data?.[i] ?? 0).toFixed(1)}%`}</td>)}</tr>)}</tbody>
          </table>
        </div>
      )}
    </>
  )
}
