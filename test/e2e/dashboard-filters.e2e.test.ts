import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { captureEvents, type TestEvent } from '../helpers/query-data.ts'

// Signups on 2024-06-01..06-05, Chrome and Safari; the insight's own range is 06-01..06-05.
const events: TestEvent[] = [1, 2, 3, 4, 5].flatMap((d) =>
  Array.from({ length: d }, (_, i) => ({ event: 'signup', distinct_id: `u${d}-${i}`, timestamp: `2024-06-0${d}T10:00:00Z`, properties: { $browser: i % 2 ? 'Safari' : 'Chrome' } })))
const count = (pred: (e: TestEvent) => boolean) => events.filter(pred).length
const day = (e: TestEvent) => Number(e.timestamp.slice(8, 10))

testOnEachEngine('dashboard filters apply to its tiles (date range and properties), cached apart from the insight', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const api = privateApi(app)
  await captureEvents(app, events)
  const query = { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'signup' }], dateRange: { date_from: '2024-06-01', date_to: '2024-06-05' } } }
  const dash = (await api.post('/dashboards/', { name: 'D', filters: { date_from: '2024-06-03', date_to: '2024-06-04' } })).json()
  const insight = (await api.post('/insights/', { name: 'Signups', query, dashboards: [dash.id] })).json()

  const total = (res: { tiles: Array<{ insight: { result: Array<{ count: number }> } }> }) => res.tiles[0]!.insight.result[0]!.count
  const board = (await api.get(`/dashboards/${dash.id}/?refresh=blocking`)).json()
  assert.equal(total(board), count((e) => day(e) >= 3 && day(e) <= 4), 'the dashboard range replaces the insight\'s')
  assert.deepEqual(board.tiles[0].insight.result[0].days, ['2024-06-03', '2024-06-04'])

  // The insight itself still answers for its own range, and the dashboard's result did not replace its cache.
  const own = (await api.get(`/insights/${insight.id}/?refresh=blocking`)).json()
  assert.equal(own.result[0].count, events.length)
  assert.equal((await api.get(`/insights/${insight.id}/`)).json().result[0].count, events.length)
  assert.equal(total((await api.get(`/dashboards/${dash.id}/?refresh=blocking`)).json()), count((e) => day(e) >= 3 && day(e) <= 4), 'served from its own cache')

  // Dashboard properties are added to the query's own filters.
  await api.patch(`/dashboards/${dash.id}/`, { filters: { date_from: '2024-06-01', properties: [{ key: '$browser', value: 'Safari', operator: 'exact', type: 'event' }] } })
  const safari = (await api.get(`/dashboards/${dash.id}/?refresh=blocking`)).json()
  assert.equal(total(safari), count((e) => e.properties!.$browser === 'Safari'))

  // No filters: the insight's own cached result.
  await api.patch(`/dashboards/${dash.id}/`, { filters: {} })
  const plain = (await api.get(`/dashboards/${dash.id}/`)).json()
  assert.equal(total(plain), events.length)
  assert.equal(plain.tiles[0].is_cached ?? plain.tiles[0].insight.is_cached, true)
})
