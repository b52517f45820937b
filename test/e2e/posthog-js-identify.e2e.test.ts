import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { gunzipSync } from 'node:zlib'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { hasChromium, launchBrowser, servePage } from '../helpers/browser.ts'
import { eventually } from '../helpers/eventually.ts'
import { privateApi } from '../helpers/private-api.ts'

const skip = hasChromium ? false : 'Chromium not installed (apt-get install chromium)'

async function listen(app: TestApp): Promise<string> {
  await app.http.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.http.server.address() as AddressInfo).port}`
}

/**
 * posthog-js from Tally's own `/static/array.js`, with its defaults: autocapture on and
 * `person_profiles: 'identified_only'` (anonymous events carry `$process_person_profile: false`).
 */
function page(projectKey: string, tally: string): string {
  return `<!doctype html><html><body>
<div class="shop"><button id="buy" class="btn primary" data-plan="pro">Buy now</button></div>
<a id="help" href="/help">Help</a>
<script src="${tally}/static/array.js"></script>
<script>
  posthog.init(${JSON.stringify(projectKey)}, {
    api_host: ${JSON.stringify(tally)}, persistence: 'memory', request_queue_config: { flush_interval_ms: 250 },
    opt_out_useragent_filter: true, // headless Chromium's user agent reads as a bot
  })
</script></body></html>`
}

/** A request body as posthog-js sends it: JSON, gzipped when `compression=gzip-js`. */
function requestBody(raw: Buffer | null): Record<string, unknown> {
  if (!raw) return {}
  const text = raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw).toString('utf8') : raw.toString('utf8')
  return JSON.parse(text) as Record<string, unknown>
}

interface EventJson {
  id: string
  event: string
  distinct_id: string
  properties: Record<string, unknown>
  elements_chain: string
  person: { distinct_ids: string[] } | null
}

async function events(app: TestApp): Promise<EventJson[]> {
  const res = await privateApi(app).get('/events/?limit=1000')
  assert.equal(res.statusCode, 200, res.body)
  return res.json().results as EventJson[]
}

async function createAction(app: TestApp, name: string, steps: object[]): Promise<number> {
  const res = await privateApi(app).post('/actions/', { name, steps })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id as number
}

async function actionCount(app: TestApp, id: number): Promise<number> {
  const res = await privateApi(app).get(`/actions/${id}/count/`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().count as number
}

async function actionPeople(app: TestApp, id: number) {
  const res = await privateApi(app).get(`/actions/people/?action_id=${id}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().results[0].people as Array<{ uuid: string; distinct_ids: string[]; is_identified: boolean }>
}

test('posthog-js in Chromium: a click, identify, an action counting the click for the identified person, a flag on a $set property', { skip }, async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  const flag = await api.post('/feature_flags/', {
    key: 'example-staff',
    filters: { groups: [{ properties: [{ key: 'email', type: 'person', operator: 'icontains', value: '@example.com' }], rollout_percentage: 100 }] },
  })
  assert.equal(flag.statusCode, 201, flag.body)
  const clickBuy = await createAction(app, 'Clicked buy', [{ event: '$autocapture', selector: 'div.shop > button#buy.primary' }])
  const clickOther = await createAction(app, 'Clicked help', [{ event: '$autocapture', selector: 'a#help' }])
  const pageviews = await createAction(app, 'Viewed a page', [{ event: '$pageview' }])

  const tally = await listen(app)
  const site = await servePage(t, page(app.projectKey, tally))
  const browser = await launchBrowser(t)
  const tab = await browser.newPage()
  const errors: string[] = []
  tab.on('console', (m) => m.type() === 'error' && errors.push(m.text()))
  tab.on('pageerror', (err) => errors.push(String(err)))
  const fromTally: string[] = []
  const flagCalls: Array<{ body: Record<string, unknown>; answer: Record<string, unknown> }> = []
  tab.on('response', async (r) => {
    if (!r.url().startsWith(tally)) return
    fromTally.push(`${r.status()} ${new URL(r.url()).pathname}`)
    if (new URL(r.url()).pathname.startsWith('/flags')) {
      try {
        flagCalls.push({ body: requestBody(r.request().postDataBuffer()), answer: await r.json() })
      } catch (err) {
        errors.push(`unreadable /flags exchange: ${String(err)}`)
      }
    }
  })
  await tab.goto(site)

  // Anonymous: a pageview, then a real click on the button (autocapture).
  await eventually(async () => (await events(app)).some((e) => e.event === '$pageview'))
  // Autocapture starts once the remote config has answered (posthog-js waits for the server's opt-out).
  await eventually(() => tab.evaluate(() => (window as any).posthog.autocapture?.isEnabled === true))
  await tab.click('#buy')
  const click = await eventually(async () => (await events(app)).find((e) => e.event === '$autocapture'))
  assert.match(click.elements_chain, /^button\.btn\.primary:/)
  assert.match(click.elements_chain, /attr__id="buy"/)
  assert.match(click.elements_chain, /;div\.shop:/)
  assert.equal(click.properties.$process_person_profile, false, 'posthog-js sends anonymous events personless by default')
  const anonId = click.distinct_id

  // Identified: the anonymous events become the person's.
  await tab.evaluate(() => (window as any).posthog.identify('user-1', { email: 'user-1@example.com' }))
  const identify = await eventually(async () => (await events(app)).find((e) => e.event === '$identify'))
  assert.equal(identify.distinct_id, 'user-1')
  assert.equal(identify.properties.$anon_distinct_id, anonId)

  const persons = await eventually(async () => {
    const res = await api.get('/persons/?distinct_id=user-1')
    const found = res.json().results as Array<{ uuid: string; distinct_ids: string[]; is_identified: boolean; properties: Record<string, unknown> }>
    return found[0]?.properties.email === 'user-1@example.com' && found
  })
  assert.equal(persons.length, 1)
  const person = persons[0]!
  assert.equal(person.is_identified, true)
  assert.deepEqual([...person.distinct_ids].sort(), [anonId, 'user-1'].sort())

  // The action with a selector step counts the click and nothing else; its people are the identified person.
  assert.equal(await actionCount(app, clickBuy), 1)
  assert.equal(await actionCount(app, clickOther), 0)
  const buyers = await actionPeople(app, clickBuy)
  assert.deepEqual(buyers.map((p) => [p.uuid, p.is_identified]), [[person.uuid, true]])
  // The anonymous pageview counts for the same person (merged, not a second one).
  assert.ok((await actionCount(app, pageviews)) >= 1)
  assert.deepEqual((await actionPeople(app, pageviews)).map((p) => p.uuid), [person.uuid])
  const stored = await events(app)
  const anonymous = stored.filter((e) => e.distinct_id === anonId)
  assert.ok(anonymous.some((e) => e.event === '$pageview') && anonymous.some((e) => e.event === '$autocapture'))
  for (const e of anonymous) assert.ok(e.person?.distinct_ids.includes('user-1'), `${e.event} has no person`)

  // The flag reads the stored $set: the browser forgets the properties it would send and asks again.
  const calls = flagCalls.length
  await tab.evaluate(() => {
    const posthog = (window as any).posthog
    posthog.resetPersonPropertiesForFlags()
    posthog.reloadFeatureFlags()
  })
  // (A request still in flight from identify, which sent the email itself, is not the one looked for.)
  const withoutEmail = (c: (typeof flagCalls)[number]) => (c.body.person_properties as Record<string, unknown> | undefined)?.email === undefined
  const call = await eventually(async () => flagCalls.slice(calls).find(withoutEmail))
  assert.equal(await tab.evaluate(() => (window as any).posthog.isFeatureEnabled('example-staff')), true)
  assert.equal(call.body.distinct_id, 'user-1')
  assert.equal((call.answer.flags as Record<string, { enabled: boolean }>)['example-staff']?.enabled, true)
  // Before identify the browser's first /flags answered the same flag false.
  assert.equal((flagCalls[0]!.answer.flags as Record<string, { enabled: boolean }>)['example-staff']?.enabled, false)

  assert.deepEqual(fromTally.filter((r) => !/^(200|204) /.test(r)), [])
  assert.deepEqual(errors, [])
})
