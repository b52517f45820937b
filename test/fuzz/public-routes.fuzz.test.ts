import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import fc from 'fast-check'
import { buildTestApp } from '../helpers/test-app.ts'
import {
  assertHealthy, assertNo5xx, describe, fuzzSettings, hostileObject, hostileScalar, hostileString, hostileValue, pack, packing,
  hostileQueryValue, pct, spliceDeep, wrongType,
} from './hostile.ts'

// Every public route with generated hostile bodies, encodings and query strings: never a 5xx, the
// process stays up and /_health answers; and a valid event sent beside hostile ones in a batch that
// answered 200 is readable afterwards.

const CAPTURE = ['/e/', '/batch/', '/capture/', '/i/v0/e/', '/engage/', '/track/']
const FLAGS = ['/decide/?v=1', '/decide/?v=2', '/decide/?v=3', '/decide/?v=4', '/flags/?v=1', '/flags/?v=2', '/flags/']

/** An event with hostile fields in every place an SDK puts something. */
const hostileEvent = fc.record(
  {
    event: fc.oneof(hostileString, wrongType),
    distinct_id: fc.oneof(hostileString, wrongType),
    properties: fc.oneof(hostileObject, wrongType),
    timestamp: fc.oneof(hostileString, hostileScalar),
    offset: hostileScalar,
    uuid: fc.oneof(hostileString, fc.constant(randomUUID())),
    $set: fc.oneof(hostileObject, wrongType),
    $set_once: hostileObject,
    token: hostileString,
  },
  { requiredKeys: [] },
)

test('capture routes: hostile batches never 5xx, and the valid event beside them is kept', async (t) => {
  const app = await buildTestApp(t)
  const settings = fuzzSettings('public-routes capture', 120)
  const kept: string[] = []
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...CAPTURE),
      packing,
      fc.array(hostileEvent, { minLength: 0, maxLength: 4 }),
      fc.oneof(fc.constant('batch'), fc.constant('array'), fc.constant('single'), fc.constant('garbage')),
      hostileValue,
      async (route, how, hostile, shape, garbage) => {
        const valid = { event: 'fuzz-valid', distinct_id: 'fuzz-user', uuid: randomUUID(), properties: { ok: true } }
        const events = [valid, ...hostile]
        const body =
          shape === 'batch' ? { api_key: app.projectKey, batch: events }
            : shape === 'array' ? events.map((e) => ({ ...e, api_key: app.projectKey }))
              : shape === 'single' ? { ...valid, api_key: app.projectKey }
                : garbage
        const text = spliceDeep(JSON.stringify(body) ?? 'null')
        const { payload, headers, query } = pack(text, how)
        const res = await app.http.inject({ method: 'POST', url: route + query, headers, payload })
        assertNo5xx(`${route} ${how} ${describe(body)}`, res)
        // The same body as GET ?data= (legacy SDKs, pixels), percent-encoded byte by byte.
        const get = await app.http.inject({ method: 'GET', url: `${route}?data=${pct(Buffer.from(text).toString('base64'))}&ip=${pct(route)}` })
        assertNo5xx(`GET ${route}?data= ${describe(body)}`, get)
        if (res.statusCode === 200 && shape !== 'garbage' && !route.startsWith('/engage')) kept.push(valid.uuid)
        await assertHealthy(app)
      },
    ),
    settings,
  )
  await assertHealthy(app)
  // Every valid event of a batch that answered 200 reaches the events table.
  for (const uuid of kept) {
    let res
    for (let i = 0; i < 400; i++) {
      res = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/${uuid}/`, headers: app.auth })
      if (res.statusCode === 200) break
      await new Promise((r) => setTimeout(r, 25))
    }
    assert.equal(res!.statusCode, 200, `acknowledged event ${uuid} is readable (seed ${settings.seed})`)
  }
  assert.ok(kept.length > 0, 'some batches were accepted')
})

test('decide, flags, definitions and remote config: hostile keys, bodies and queries never 5xx', async (t) => {
  const app = await buildTestApp(t)
  const settings = fuzzSettings('public-routes flags', 120)
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...FLAGS),
      packing,
      fc.record(
        {
          api_key: fc.oneof(hostileString, fc.constant(app.projectKey), wrongType),
          token: fc.oneof(hostileString, fc.constant(app.projectKey), wrongType),
          distinct_id: fc.oneof(hostileString, wrongType),
          groups: fc.oneof(hostileObject, wrongType),
          person_properties: fc.oneof(hostileObject, wrongType),
          group_properties: fc.oneof(hostileObject, wrongType),
          flag_keys_to_evaluate: wrongType,
          $anon_distinct_id: hostileString,
          disable_flags: wrongType,
          project_id: fc.oneof(hostileString, wrongType),
        },
        { requiredKeys: [] },
      ),
      hostileQueryValue,
      async (route, how, body, q) => {
        const { payload, headers, query } = pack(spliceDeep(JSON.stringify(body)), how)
        const url = route + (route.includes('?') ? '&' : '?') + query.replace('?', '') + `&token=${q}&project_id=${q}`
        assertNo5xx(`${route} ${how} ${describe(body)}`, await app.http.inject({ method: 'POST', url, headers, payload }))
        assertNo5xx(`GET ${route}`, await app.http.inject({ method: 'GET', url: `${route}${route.includes('?') ? '&' : '?'}api_key=${q}` }))
        for (const auth of [app.auth.authorization, `Bearer ${decodeURIComponentSafe(q).replace(/[^\x20-\x7e]/g, '?')}`]) {
          const res = await app.http.inject({
            method: 'GET',
            url: `/flags/definitions?token=${q}&send_cohorts=${q}`,
            headers: { authorization: auth },
          })
          assertNo5xx(`definitions ${describe(q)}`, res)
        }
        for (const key of [q, app.projectKey]) {
          // `key` goes into the path as is: encoded hostile text or raw bad escapes.
          assertNo5xx(`config ${describe(key)}`, await app.http.inject({ method: 'GET', url: `/array/${key}/config` }))
          assertNo5xx(`config.js ${describe(key)}`, await app.http.inject({ method: 'GET', url: `/array/${key}/config.js` }))
        }
        await assertHealthy(app)
      },
    ),
    settings,
  )
  await assertHealthy(app)
})

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
