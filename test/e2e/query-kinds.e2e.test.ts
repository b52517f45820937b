import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { postQuery } from '../helpers/query-data.ts'

// One record per query kind (src/modules/query/query-kinds.ts), looked up in a Map: names that an
// object's prototype answers to are unknown kinds, wherever a kind is looked up.
const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']

testOnEachEngine('a query kind named after an object prototype member is a 400 naming query.kind, never a 500', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  for (const kind of PROTOTYPE_NAMES) {
    const res = await postQuery(app, { kind })
    assert.equal(res.statusCode, 400, `${kind}: ${res.body}`)
    assert.equal(res.json().attr, 'query.kind', kind)
    assert.equal(res.json().code, 'invalid_choice', kind)
  }
})

testOnEachEngine('actors of an insight of a prototype-named kind are a 400 naming its source kind', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  for (const kind of PROTOTYPE_NAMES) {
    const res = await postQuery(app, { kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source: { kind } } })
    assert.equal(res.statusCode, 400, `${kind}: ${res.body}`)
    assert.equal(res.json().attr, 'query.source.source.kind', kind)
  }
})

testOnEachEngine('the unknown-kind error lists every registered kind', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const res = await postQuery(app, { kind: 'NoSuchQuery' })
  assert.equal(res.statusCode, 400)
  for (const kind of ['TrendsQuery', 'FunnelsQuery', 'RetentionQuery', 'StickinessQuery', 'LifecycleQuery', 'EventsQuery', 'HogQLQuery', 'ActorsQuery']) {
    assert.match(res.json().detail, new RegExp(kind))
  }
})
