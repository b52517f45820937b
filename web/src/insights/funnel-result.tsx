import { Empty } from '../ui.tsx'
import { humanDuration, num, percent } from './format.ts'
import { Chart } from './chart.tsx'
import { funnelStepPick, type ChartPick, type PersonsOpener } from './actors.ts'

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
const CLICK_HINT = 'Click a bar to see the persons behind it.'

type Json = Record<string, unknown>
const stepName = (s: FunnelStep, i: number) => `${i + 1}. ${s.custom_name || s.name || 'Step'}`
/** "step 2: created project", as the persons list of a step is titled. */
const stepTitle = (s: FunnelStep, i: number) => `step ${i + 1}: ${s.custom_name || s.name || 'Step'}`
const valueName = (v: unknown) => (Array.isArray(v) ? v.join(', ') : v == null || v === '' ? '(none)' : String(v))
const DROPPED = '#d7dbe6'

/** A funnel's result drawn as its shape says: steps (per breakdown value), time to convert, or conversion trends. */
export function FunnelResult({ results, small, persons }: { results: unknown; small?: boolean; persons?: PersonsOpener }) {
  if (Array.isArray(results)) {
    if (results.length === 0) return <Empty>No one entered this funnel in the range.</Empty>
    if (Array.isArray(results[0])) return <FunnelBreakdown values={results as FunnelStep[][]} small={small} persons={persons} />
    if ('data' in (results[0] as Json)) return <ConversionTrends series={results as ConversionTrend[]} small={small} persons={persons} />
    return <FunnelSteps steps={results as FunnelStep[]} small={small} persons={persons} />
  }
  return <TimeToConvertHistogram result={(results ?? {}) as TimeToConvert} small={small} />
}

/**
 * Bars of persons per step, the ones lost since the previous step stacked in grey, conversion from
 * the first on top. With `persons`, a bar (or a count in the table) opens who reached the step, its
 * grey part (or the drop-off count) who dropped off before it.
 */
function FunnelSteps({ steps, small, persons }: { steps: FunnelStep[]; small?: boolean; persons?: PersonsOpener }) {
  const counts = steps.map((s) => s.count ?? 0)
  const first = counts[0] ?? 0
  const dropped = counts.map((c, i) => (i === 0 ? 0 : Math.max(0, counts[i - 1] - c)))
  const open = persons && ((i: number, droppedOff: boolean) => {
    if (droppedOff && i === 0) return
    persons.open(funnelStepPick(persons.query, stepTitle(steps[i], i), i + 1, { droppedOff, count: droppedOff ? dropped[i] : counts[i] }))
  })
  const personsButton = (i: number, droppedOff: boolean, text: string) => (open
    ? <button type="button" className="link" onClick={() => open(i, droppedOff)} aria-label={`${text}: ${droppedOff ? 'persons who dropped off before' : 'persons who reached'} ${stepTitle(steps[i], i)}`}>{text}</button>
    : text)
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
      <Chart option={option} label="Funnel chart" small={small} onPick={open && ((p: ChartPick) => open(p.dataIndex, p.seriesIndex === 1))} />
      {open && !small && <p className="hint">{CLICK_HINT}</p>}
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
                  <td className="num">{personsButton(i, false, num(counts[i]))}</td>
                  <td className="num">{percent(counts[i], first)}</td>
                  <td className="num">{i ? percent(counts[i], counts[i - 1]) : ''}</td>
                  <td className="num">{i ? personsButton(i, true, `${num(dropped[i])} (${percent(dropped[i], counts[i - 1])})`) : ''}</td>
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

/** Grouped bars, one series per breakdown value (a bar opens who of that value reached the step), and a row per value with each step's persons and conversion. */
function FunnelBreakdown({ values, small, persons }: { values: FunnelStep[][]; small?: boolean; persons?: PersonsOpener }) {
  const steps = values[0] ?? []
  const onPick = persons && (({ seriesIndex, dataIndex }: ChartPick) => {
    const value = values[seriesIndex]?.[dataIndex]
    if (!value) return
    const title = `${stepTitle(value, dataIndex)} · ${valueName(value.breakdown_value)}`
    persons.open(funnelStepPick(persons.query, title, dataIndex + 1, { droppedOff: false, count: value.count ?? 0, breakdownValue: value.breakdown_value }))
  })
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
      <Chart option={option} label="Funnel chart by breakdown" small={small} onPick={onPick} />
      {onPick && !small && <p className="hint">{CLICK_HINT}</p>}
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

/** Conversion rate (%) of the persons who entered in each interval; a point opens who of them converted. */
function ConversionTrends({ series, small, persons }: { series: ConversionTrend[]; small?: boolean; persons?: PersonsOpener }) {
  const labels = series[0]?.labels ?? series[0]?.days ?? []
  const name = (s: ConversionTrend) => (s.breakdown_value == null ? 'Conversion rate' : valueName(s.breakdown_value))
  const onPick = persons && (({ seriesIndex, dataIndex }: ChartPick) => {
    const s = series[seriesIndex]
    const day = s?.days?.[dataIndex]
    if (!s || day === undefined) return
    const breakdown = s.breakdown_value == null ? {} : { funnelStepBreakdown: s.breakdown_value }
    persons.open({
      title: `Converted, entered ${labels[dataIndex] ?? day}${s.breakdown_value == null ? '' : ` · ${name(s)}`}`,
      source: { kind: 'FunnelsActorsQuery', source: persons.query, funnelTrendsEntrancePeriodStart: day, funnelTrendsDropOff: false, ...breakdown },
    })
  })
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
      <Chart option={option} label="Conversion trends chart" small={small} onPick={onPick} pickColumn />
      {onPick && !small && <p className="hint">Click a point to see who of those who entered then converted.</p>}
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
