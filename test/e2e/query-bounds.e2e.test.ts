import assert from 'node:assert/strict'
import { privateApi } from '../helpers/private-api.ts'
import { postQuery } from '../helpers/query-data.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { testOnEachEngine } from '../helpers/engines.ts'

// Private inputs that drive per-item work are bounded with a 400 naming the field and the limit (a
// TrendsQuery of 5,000 series took 33 s, a replay of 100,000 ids 16 s).

function assertMaxLength(res: { statusCode: number; body: string }, attr: string, limit: string): void {
  assert.equal(res.statusCode, 400, res.body.slice(0, 300))
  const body = JSON.parse(res.body)
  assert.deepEqual([body.type, body.code, body.attr], ['validation_error', 'max_length', attr])
  assert.match(body.detail, new RegExp(`\\b${limit}\\b`))
}

const trends = (series: number, extra: Record<string, unknown> = {}) => ({
  kind: 'TrendsQuery', dateRange: { date_from: '2024-01-01', date_to: '2024-01-02' },
  series: Array.from({ length: series }, (_, i) => ({ kind: 'EventsNode', event: `e${i}` })), ...extra,
})

testOnEachEngine('series per trends query, values per property filter, filters per group: 400s naming the limit; at the limit, answered', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  assertMaxLength(await postQuery(app, trends(5_000)), 'query.series', '100')
  assertMaxLength(await postQuery(app, trends(101)), 'query.series', '100')
  assert.equal((await postQuery(app, trends(3))).statusCode, 200)

  const inList = (n: number) => trends(1, { properties: [{ key: 'plan', type: 'event', operator: 'exact', value: Array.from({ length: n }, (_, i) => `v${i}`) }] })
  assertMaxLength(await postQuery(app, inList(100_000)), 'query.properties.0.value', '1000')
  const atLimit = await postQuery(app, inList(1_000))
  assert.equal(atLimit.statusCode, 200, atLimit.body.slice(0, 300))

  const filters = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${i}`, type: 'event', operator: 'is_set' }))
  assertMaxLength(await postQuery(app, trends(1, { properties: filters(201) })), 'query.properties', '200')
  assertMaxLength(await postQuery(app, trends(1, { properties: { type: 'AND', values: filters(201) } })), 'query.properties.values', '200')
  assert.equal((await postQuery(app, trends(1, { properties: filters(200) }))).statusCode, 200)
})

testOnEachEngine('ids per dead-letter replay: a 400 naming the limit past 10,000', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const api = privateApi(app)
  assertMaxLength(await api.post('/dead_letters/replay/', { ids: Array.from({ length: 100_000 }, (_, i) => i + 1) }), 'ids', '10000')
  const ok = await api.post('/dead_letters/replay/', { ids: Array.from({ length: 10_000 }, (_, i) => i + 1) })
  assert.equal(ok.statusCode, 200, ok.body)
  assert.deepEqual(ok.json(), { replayed: 0 })
})
