import assert from 'node:assert/strict'
import { test } from 'node:test'
import { privateApi } from '../helpers/private-api.ts'
import { postQuery } from '../helpers/query-data.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'

// Names that a plain object answers through Object.prototype: every place Tally looks a name from
// the request up in a table must find nothing for them (a 400 naming the field), never a 500, and
// never a 200 built from the prototype (`constructor` once answered with the query context, API
// token included).
export const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'hasOwnProperty', 'valueOf', 'toString', 'isPrototypeOf', '__defineGetter__', 'propertyIsEnumerable', 'toLocaleString']

function assert400(res: { statusCode: number; body: string }, app: TestApp, label: string, attr?: string): void {
  assert.equal(res.statusCode, 400, `${label}: ${res.body.slice(0, 300)}`)
  assert.ok(!res.body.includes(app.projectKey), `${label}: the project's API token leaked`)
  const body = JSON.parse(res.body)
  assert.equal(body.type, 'validation_error', label)
  if (attr !== undefined) assert.equal(body.attr, attr, label)
}

test('POST /query/ with a prototype name as kind (bare or wrapped) is a 400 naming query.kind', async (t) => {
  const app = await buildTestApp(t)
  for (const kind of PROTOTYPE_NAMES) {
    assert400(await postQuery(app, { kind }), app, `kind ${kind}`, 'query.kind')
    assert400(await postQuery(app, { kind: 'InsightVizNode', source: { kind } }), app, `wrapped kind ${kind}`, 'query.source.kind')
  }
  // A real kind still answers.
  assert.equal((await postQuery(app, { kind: 'EventsQuery', select: ['count()'] })).statusCode, 200)
})

test('an insight whose query kind is a prototype name is not saved', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  for (const kind of PROTOTYPE_NAMES) {
    assert400(await api.post('/insights/', { name: 'x', query: { kind: 'InsightVizNode', source: { kind } } }), app, `insight kind ${kind}`)
  }
  const list = (await api.get('/insights/')).json()
  assert.equal(list.count, 0, 'no insight was saved')
})

test('other names read from requests find nothing through the prototype', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  for (const name of PROTOTYPE_NAMES) {
    assert400(await postQuery(app, { kind: 'EventsQuery', select: [name] }), app, `EventsQuery select ${name}`, 'query.select.0')
    assert400(await postQuery(app, { kind: 'HogQLQuery', query: `select now() - interval 1 ${name}` }), app, `HogQL interval unit ${name}`)
    assert400(await postQuery(app, { kind: 'HogQLQuery', query: `select now() - interval '1 ${name}'` }), app, `HogQL interval text ${name}`)
    // toString is a HogQL function of its own.
    if (name !== 'toString') assert400(await postQuery(app, { kind: 'HogQLQuery', query: `select ${name}(1)` }), app, `HogQL function ${name}`)
    assert400(await postQuery(app, { kind: 'HogQLQuery', query: `select ${name} from events` }), app, `HogQL field ${name}`)
    assert400(await api.post('/dashboards/', { name: 'd', use_template: name }), app, `dashboard template ${name}`, 'use_template')
    const flags = await api.get(`/feature_flags/?order=${encodeURIComponent(name)}`)
    assert.equal(flags.statusCode, 200, `feature flags ordered by ${name}: ${flags.body}`)
    const defs = await api.get(`/property_definitions/?type=${encodeURIComponent(name)}`)
    assert.equal(defs.statusCode, 400, `property definitions of type ${name}: ${defs.body}`)
  }
})
