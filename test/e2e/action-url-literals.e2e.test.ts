// The url steps' substring prefilter reads the stored properties text as the event store wrote it
// (JSON escapes), so urls with quotes, backslashes, control characters and non-ASCII text are
// captured through the real pipeline here and counted through /count, against the pure matcher.
import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { compileAction, type ActionStepDefinition } from '../../src/domain/actions/match-action.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'

const URLS = [
  'https://a.com/say "hi"',
  'https://a.com/back\\slash',
  'https://a.com/line\nbreak\ttab',
  'https://a.com/ctrl\u0001\u001f',
  'https://a.com/émoji😀/x',
  'https://a.com/sep\u2028line',
  'https://a.com/plain',
]

const STEPS: ActionStepDefinition[][] = [
  ...URLS.map((url) => [{ event: '$pageview', url, url_matching: 'exact' }]),
  [{ event: '$pageview', url: '%"hi"', url_matching: 'contains' }],
  [{ event: '$pageview', url: 'back\\sl', url_matching: 'contains' }],
  [{ event: '$pageview', url: 'line\nbreak\t', url_matching: 'contains' }],
  [{ event: '$pageview', url: '\u0001\u001f', url_matching: 'contains' }],
  [{ event: '$pageview', url: 'émoji😀/', url_matching: 'contains' }],
  [{ event: '$pageview', url: '\u2028line', url_matching: 'contains' }],
  [{ event: '$pageview', url: 'say "hi"$', url_matching: 'regex' }],
  [{ event: '$pageview', url: 'back\\\\slash', url_matching: 'regex' }],
  [{ event: '$pageview', url: 'line\\nbreak\\ttab', url_matching: 'regex' }],
  [{ event: '$pageview', url: 'émoji😀+/x', url_matching: 'regex' }],
  [{ event: '$pageview', url: 'https://a\\.com/(say|back)', url_matching: 'regex' }],
  [{ event: '$pageview', url: '"hi', url_matching: 'exact' }], // none
  [{ event: '$pageview', url: 'a.com/say \\"hi', url_matching: 'contains' }], // none: the stored escape is not the url
]

testOnEachEngine('url steps count urls with quotes, backslashes, control and non-ASCII characters as the pure matcher does', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const api = privateApi(app)
  const batch: Array<{ event: string; distinct_id: string; uuid: string; properties: Record<string, unknown> }> = URLS.map((url, i) => ({ event: '$pageview', distinct_id: `d${i}`, uuid: crypto.randomUUID(), properties: { $current_url: url } }))
  // The same urls nested under another key must not count (the prefilter may pass them, the JSON test may not).
  batch.push({ event: '$pageview', distinct_id: 'nested', uuid: crypto.randomUUID(), properties: { other: { $current_url: URLS[0]! } } })
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
  await waitForEvents(app, batch.length)

  const now = Date.now()
  for (const [i, steps] of STEPS.entries()) {
    const created = await api.post('/actions/', { name: `url ${i}`, steps })
    assert.equal(created.statusCode, 201, created.body)
    const matcher = compileAction(steps)
    const expected = batch.filter((e) => matcher({ event: e.event, properties: e.properties, elementsChain: '' }, now)).length
    const count = await api.get(`/actions/${created.json().id}/count/`)
    assert.equal(count.statusCode, 200, count.body)
    assert.equal(count.json().count, expected, JSON.stringify(steps))
  }
  // The pure matcher itself found what the list says: each exact url once, the last two none.
  const counts = STEPS.map((steps) => batch.filter((e) => compileAction(steps)({ event: e.event, properties: e.properties, elementsChain: '' }, now)).length)
  assert.deepEqual(counts, [...URLS.map(() => 1), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0])
})
