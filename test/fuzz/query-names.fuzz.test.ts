import { test } from 'node:test'
import fc from 'fast-check'
import { postQuery } from '../helpers/query-data.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { assertHealthy, assertNo5xx, describe, fuzzSettings, hostileString } from './hostile.ts'

// POST /query/ with names that plain objects answer through Object.prototype (as kinds, wrapped kinds,
// select entries, interval units, functions), HogQL integer arithmetic at and past Int64's range, and
// calls of up to 3,000 arguments: never a 5xx, and the project's API token never in an answer.

const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'hasOwnProperty', 'valueOf', 'toString', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__defineGetter__', '__lookupSetter__']
const name = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) }, { weight: 1, arbitrary: hostileString })
const WRAPPERS = ['InsightVizNode', 'DataTableNode', 'DataVisualizationNode']

const kindQuery = fc.oneof(
  name.map((kind) => ({ kind })),
  fc.tuple(fc.constantFrom(...WRAPPERS), name).map(([kind, inner]) => ({ kind, source: { kind: inner } })),
  name.map((n) => ({ kind: 'EventsQuery', select: [n] })),
  name.map((n) => ({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'e', math: n }], interval: n })),
)

const INT64_EDGES = ['9223372036854775807', '9223372036854775808', '18446744073709551615', '170141183460469231731687303715884105728', '9007199254740993', '1', '0', '2']
const arithmetic = fc.tuple(fc.constantFrom(...INT64_EDGES), fc.constantFrom('+', '-', '*', '/', '%'), fc.constantFrom(...INT64_EDGES), fc.boolean())
  .map(([a, op, b, neg]) => `select ${neg ? '-' : ''}${a} ${op} ${b}`)
const wideCall = fc.tuple(fc.constantFrom('concat', 'coalesce', 'uniq', 'multiIf', 'JSONHas'), fc.integer({ min: 1, max: 3_000 }))
  .map(([fn, n]) => `select ${fn}(${Array.from({ length: n }, (_, i) => `'${i}'`).join(', ')})`)
const hogqlNames = fc.tuple(name, fc.constantFrom(0, 1, 2, 3)).map(([n, form]) => [`select ${n}(1)`, `select ${n} from events`, `select now() - interval 1 ${n}`, `select now() - interval '1 ${n}'`][form]!)

test('query kinds and names through Object.prototype, Int64 edges, wide calls: never a 5xx, never the token', async (t) => {
  const app = await buildTestApp(t)
  const settings = fuzzSettings('query-names', 60)
  const check = async (query: unknown) => {
    const res = await postQuery(app, query)
    assertNo5xx(`POST /query/ ${describe(query)}`, res)
    if (res.body.includes(app.projectKey)) throw new Error(`the API token leaked for ${describe(query)}`)
    const saved = await app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/insights/`, headers: app.auth, payload: { name: 'fuzz', query } })
    assertNo5xx(`POST /insights/ ${describe(query)}`, saved)
  }
  await fc.assert(fc.asyncProperty(kindQuery, check), settings)
  await fc.assert(fc.asyncProperty(fc.oneof(arithmetic, wideCall, hogqlNames), (query) => check({ kind: 'HogQLQuery', query })), settings)
  await assertHealthy(app)
})
