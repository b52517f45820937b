import assert from 'node:assert/strict'
import { after, before, type TestContext } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { ENGINES, testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { skipWithoutClickHouse } from '../helpers/clickhouse.ts'
import { captureEvents, postQuery, queryOk, seededRandom, type TestEvent } from '../helpers/query-data.ts'

// WebVitalsQuery as the web page sends it: a TrendsQuery source of $web_vitals series (INP, LCP, CLS,
// FCP at p75/p90/p99, posthog-js's `$web_vitals_<METRIC>_value` properties), the page's filters beside it.
const METRICS = ['INP', 'LCP', 'CLS', 'FCP'] as const
const MATHS = [['p75', 0.75], ['p90', 0.9], ['p99', 0.99]] as const
const DAYS = ['2024-06-03', '2024-06-04']
const rand = seededRandom(11)
const events: TestEvent[] = []
for (const day of DAYS) {
  // 101 values of each metric a day (posthog-js may send a metric alone: INP on other events than the
  // others), so each percentile is one of the values whatever the engine's interpolation.
  for (let i = 0; i < 121; i++) {
    const p: Record<string, unknown> = { $pathname: '/' }
    if (i < 101) Object.assign(p, { $web_vitals_LCP_value: Math.round(500 + rand() * 4000), $web_vitals_FCP_value: Math.round(200 + rand() * 2000), $web_vitals_CLS_value: Math.round(rand() * 500) / 1000 })
    if (i >= 20) p.$web_vitals_INP_value = Math.round(20 + rand() * 600)
    events.push({ event: '$web_vitals', distinct_id: `u${i % 17}`, timestamp: `${day}T${String(1 + (i % 20)).padStart(2, '0')}:00:${String(i % 60).padStart(2, '0')}.000Z`, properties: p })
  }
  // Outliers the page's filter leaves out.
  for (let i = 0; i < 10; i++) events.push({ event: '$web_vitals', distinct_id: 'admin', timestamp: `${day}T12:00:0${i}.000Z`, properties: { $pathname: '/admin', $web_vitals_LCP_value: 99_999, $web_vitals_INP_value: 99_999, $web_vitals_FCP_value: 99_999, $web_vitals_CLS_value: 9 } })
}

const apps = {} as Record<Engine, TestApp>
const cleanups: Array<() => Promise<void>> = []
before(async () => {
  for (const engine of ENGINES) {
    if (engine === 'clickhouse' && skipWithoutClickHouse()) continue
    apps[engine] = await buildTestApp({ after: (fn: () => Promise<void>) => cleanups.push(fn) } as unknown as TestContext, { engine })
    await captureEvents(apps[engine], events)
  }
})
after(async () => {
  for (const fn of cleanups) await fn()
})

const vitalsQuery = (properties: unknown[]) => ({
  kind: 'WebVitalsQuery',
  properties,
  dateRange: { date_from: DAYS[0], date_to: DAYS[1] },
  source: {
    kind: 'TrendsQuery',
    dateRange: { date_from: DAYS[0], date_to: DAYS[1] },
    interval: 'day',
    series: METRICS.flatMap((name) => MATHS.map(([math]) => ({ kind: 'EventsNode', event: '$web_vitals', name: '$web_vitals', custom_name: name, math, math_property: `$web_vitals_${name}_value` }))),
    trendsFilter: { display: 'ActionsLineGraph' },
  },
})

/** The percentile of a day's values by linear interpolation (each index here is whole). */
function percentile(day: string, key: string, q: number, keep: (e: TestEvent) => boolean): number {
  const values = events.filter((e) => e.timestamp.startsWith(day) && keep(e) && typeof e.properties?.[key] === 'number').map((e) => e.properties![key] as number).sort((a, b) => a - b)
  const at = q * (values.length - 1)
  const lo = values[Math.floor(at)]!
  return lo + (values[Math.ceil(at)]! - lo) * (at - Math.floor(at))
}

testOnEachEngine('web vitals: INP, LCP, CLS and FCP at p75/p90/p99 per day, under the page\'s filters', async (_t, engine) => {
  const notAdmin = [{ key: '$pathname', operator: 'is_not', value: '/admin', type: 'event' }]
  const body = await queryOk(apps[engine], vitalsQuery(notAdmin))
  assert.equal(body.results.length, METRICS.length * MATHS.length)
  let i = 0
  for (const name of METRICS) {
    for (const [math, q] of MATHS) {
      const r = body.results[i++]
      assert.deepEqual(r.days, DAYS)
      assert.equal(r.action.custom_name, name)
      assert.equal(r.action.math, math)
      const expected = DAYS.map((d) => percentile(d, `$web_vitals_${name}_value`, q, (e) => e.properties?.$pathname !== '/admin'))
      r.data.forEach((v: number, k: number) => assert.ok(Math.abs(v - expected[k]!) < 1e-9, `${name} ${math} ${DAYS[k]}: ${v} vs ${expected[k]}`))
    }
  }
  // Without the filter the outliers reach p99.
  const unfiltered = await queryOk(apps[engine], vitalsQuery([]))
  assert.equal(unfiltered.results[2 + 3].data[0], 99_999)
})

testOnEachEngine('web vitals: a source that is not a TrendsQuery is a 400 naming it', async (_t, engine) => {
  const res = await postQuery(apps[engine], { kind: 'WebVitalsQuery', properties: [], source: { kind: 'FunnelsQuery', series: [] } })
  assert.equal(res.statusCode, 400, res.body)
  assert.equal(res.json().attr, 'query.source.kind')
})
