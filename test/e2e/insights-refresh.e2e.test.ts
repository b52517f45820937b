import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { captureEvents, type TestEvent } from '../helpers/query-data.ts'

const day = (d: number, h: number) => `2024-06-0${d}T${String(h).padStart(2, '0')}:00:00Z`
const first: TestEvent[] = [
  ...[0, 1, 2].map((h) => ({ event: 'signup', distinct_id: `u${h}`, timestamp: day(1, h) })),
  ...[0, 1].map((h) => ({ event: 'signup', distinct_id: `v${h}`, timestamp: day(3, h) })),
  { event: 'login', distinct_id: 'u0', timestamp: day(2, 5) },
]
const signups = (d: string, list: TestEvent[]) => list.filter((e) => e.event === 'signup' && e.timestamp.startsWith(d)).length
const trendsOf = (event: string) => ({
  kind: 'InsightVizNode',
  source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event }], dateRange: { date_from: '2024-06-01', date_to: '2024-06-03' } },
})

testOnEachEngine('insight results: computed on ?refresh=blocking, cached after, recomputed on force_blocking, dropped when the query changes; dashboard tiles carry them', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const api = privateApi(app)
  await captureEvents(app, first)
  const created = await api.post('/insights/', { name: 'Signups', query: trendsOf('signup') })
  assert.equal(created.statusCode, 201, created.body)
  const id = created.json().id
  const get = async (refresh?: string) => {
    const res = await api.get(`/insights/${id}/${refresh === undefined ? '' : `?refresh=${refresh}`}`)
    assert.equal(res.statusCode, 200, res.body)
    return res.json()
  }

  // Default (force_cache): nothing computed yet.
  const untouched = await get()
  assert.equal(untouched.result, null)
  assert.equal(untouched.last_refresh, null)
  assert.equal(untouched.is_cached, false)

  const computed = await get('blocking')
  assert.equal(computed.is_cached, false)
  assert.ok(computed.last_refresh)
  assert.deepEqual(computed.result[0].data, ['2024-06-01', '2024-06-02', '2024-06-03'].map((d) => signups(d, first)))

  const cached = await get('blocking')
  assert.equal(cached.is_cached, true)
  assert.equal(cached.last_refresh, computed.last_refresh)
  assert.deepEqual(cached.result, computed.result)
  assert.equal((await get()).is_cached, true, 'force_cache serves the cached result')

  // New events: blocking keeps serving the fresh cache, force_blocking (and legacy refresh=true) recompute.
  const more: TestEvent[] = [{ event: 'signup', distinct_id: 'w0', timestamp: day(2, 9) }]
  await captureEvents(app, more, first.length)
  assert.deepEqual((await get('blocking')).result[0].data, computed.result[0].data)
  const forced = await get('force_blocking')
  assert.equal(forced.is_cached, false)
  assert.deepEqual(forced.result[0].data, ['2024-06-01', '2024-06-02', '2024-06-03'].map((d) => signups(d, [...first, ...more])))
  assert.equal((await get('true')).is_cached, false)

  // A new query drops the cache.
  const patched = await api.patch(`/insights/${id}/`, { query: trendsOf('login') })
  assert.equal(patched.statusCode, 200, patched.body)
  assert.equal(patched.json().result, null)
  assert.equal((await get('force_cache')).result, null)
  assert.deepEqual((await get('lazy_async')).result[0].data, [0, 1, 0])

  // Dashboard tiles carry their insight's result the same way.
  const dash = await api.post('/dashboards/', { name: 'D' })
  assert.equal(dash.statusCode, 201, dash.body)
  assert.equal((await api.patch(`/insights/${id}/`, { dashboards: [dash.json().id] })).statusCode, 200)
  const board = await api.get(`/dashboards/${dash.json().id}/?refresh=blocking`)
  assert.equal(board.statusCode, 200, board.body)
  const tile = board.json().tiles.find((x: { insight: { id: number } | null }) => x.insight?.id === id)
  assert.deepEqual(tile.insight.result[0].data, [0, 1, 0])
  assert.equal(tile.is_cached, true, 'computed by the lazy_async read above')

  const bad = await api.get(`/insights/${id}/?refresh=sometimes`)
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().attr, 'refresh')
})

testOnEachEngine('a DataTableNode insight stores an EventsQuery: its result is the rows, with columns', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const api = privateApi(app)
  await captureEvents(app, first)
  const created = await api.post('/insights/', { query: { kind: 'DataTableNode', source: { kind: 'EventsQuery', select: ['event', 'count()'], orderBy: ['count() DESC'] } } })
  assert.equal(created.statusCode, 201, created.body)
  const res = await api.get(`/insights/${created.json().id}/?refresh=force_blocking`)
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual(res.json().columns, ['event', 'count()'])
  assert.deepEqual(res.json().result, [['signup', 5], ['login', 1]])
})
