import assert from 'node:assert/strict'
import { test } from 'node:test'
import { hasChromium, launchBrowser, servePage } from '../helpers/browser.ts'
import { eventually } from '../helpers/eventually.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { screenshot, signInWithKey, startWebTally } from '../helpers/web-app.ts'
import { buildTestApp } from '../helpers/test-app.ts'

const skip = hasChromium ? false : 'Chromium not installed (apt-get install chromium)'

/** An autocapture click whose inline style and onclick hold `;` (one element inside a div). */
const CHAIN = 'button.btn.primary:attr__onclick="track(); go()"attr__style="color: red; margin: 0"nth-child="1"nth-of-type="1"text="Buy; now";div.cart:nth-child="2"nth-of-type="1"'

test('the events API reads elements_chain into PostHog\'s elements, a `;` inside a value included', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.http.inject({ method: 'POST', url: '/e/', payload: { api_key: app.projectKey, event: '$autocapture', distinct_id: 'u1', properties: { $elements_chain: CHAIN } } })
  assert.equal(res.statusCode, 200)
  const [event] = await waitForEvents(app, 1)
  const elements = event.elements as Array<{ tag_name: string; text: string | null; attributes: Record<string, string>; order: number }>
  assert.deepEqual(elements.map((e) => [e.tag_name, e.order]), [['button', 0], ['div', 1]])
  assert.equal(elements[0].text, 'Buy; now')
  assert.equal(elements[0].attributes.attr__style, 'color: red; margin: 0')
})

test('an unknown app address opened by a browser gets the app (404), an API client PostHog\'s JSON 404', async (t) => {
  const { app } = await startWebTally(t, { seed: false })
  for (const url of ['/web', '/experiments', '/surveys/new']) {
    const page = await app.http.inject({ url, headers: { accept: 'text/html,application/xhtml+xml' } })
    assert.equal(page.statusCode, 404, url)
    assert.match(String(page.headers['content-type']), /^text\/html/, url)
    const api = await app.http.inject({ url, headers: { accept: 'application/json' } })
    assert.equal(api.statusCode, 404)
    assert.equal(api.json().code, 'not_found')
  }
  for (const url of ['/api/nothing/', '/e/nothing', '/static/nothing.js', '/_nothing', '/robots.txt']) {
    const res = await app.http.inject({ url, headers: { accept: 'text/html' } })
    assert.equal(res.statusCode, 404, url)
    assert.equal(res.json().code, 'not_found', `${url} keeps the JSON 404`)
  }
})

test('web app: elements, person properties, SDK switches, the HTML snippet and the not-found page', { skip }, async (t) => {
  const { app, url } = await startWebTally(t, { seed: false })
  const batch = [
    { event: '$autocapture', properties: { distinct_id: 'ada', $elements_chain: CHAIN, $event_type: 'click' } },
    { event: '$identify', properties: { distinct_id: 'ada', $set: { name: 'Ada', zeta: 'last', alpha: 'first', company: null, $initial_os: 'Linux', $browser: 'Chrome' } } },
  ]
  assert.equal((await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })).statusCode, 200)
  await waitForEvents(app, 2)
  const browser = await launchBrowser(t)
  const page = await browser.newPage()
  // Into the helper's temp folder (SCREENSHOTS_DIR): a test run never rewrites tracked files.
  const shot = (name: string) => screenshot(page, name)
  await signInWithKey(page, url, app.personalKey)

  await t.test('Activity lists an autocapture event\'s elements as PostHog parses the chain', async () => {
    await page.getByRole('table', { name: 'Events' }).getByRole('button', { name: '$autocapture' }).click()
    const items = page.getByRole('list', { name: 'Elements' }).getByRole('listitem')
    await items.first().waitFor()
    assert.equal(await items.count(), 2)
    assert.match(await items.nth(0).innerText(), /button\.btn\.primary “Buy; now”.*attr__style="color: red; margin: 0"/)
    assert.match(await items.nth(1).innerText(), /^div\.cart/)
    await shot('activity-elements')
  })

  await t.test('a person\'s properties are sorted and searchable; nulls and $ properties behind a toggle', async () => {
    const persons = (await app.http.inject({ url: `/api/projects/${app.projectId}/persons/`, headers: app.auth })).json().results
    await eventually(async () => persons.length > 0)
    await page.goto(`${url}/persons/${persons[0].uuid}`)
    const table = page.getByRole('table', { name: 'Person properties' })
    await table.waitFor()
    const keys = async () => (await table.getByRole('rowheader').allInnerTexts()).map((k) => k.trim())
    assert.deepEqual(await keys(), ['alpha', 'name', 'zeta'])
    await page.getByLabel('Search properties').fill('ad')
    assert.deepEqual(await keys(), ['name'])
    await page.getByLabel('Search properties').fill('')
    await page.getByLabel(/Show empty and PostHog properties/).check()
    const all = await keys()
    for (const k of ['$browser', '$initial_os', 'company']) assert.ok(all.includes(k), `${k} shown: ${all}`)
    assert.deepEqual(all, [...all].sort((a, b) => a.localeCompare(b)), 'sorted')
    await shot('person-properties')
  })

  await t.test('Settings: a switch turns exception autocapture on in the remote config', async () => {
    await page.goto(`${url}/settings`)
    const exceptions = page.getByRole('switch', { name: /Capture exceptions/ })
    assert.equal(await exceptions.isChecked(), false)
    await exceptions.check()
    await eventually(async () => (await app.http.inject({ url: `/array/${app.projectKey}/config` })).json().autocaptureExceptions === true)
    await page.reload()
    assert.equal(await page.getByRole('switch', { name: /Capture exceptions/ }).isChecked(), true)
    await shot('settings-sdk')
  })

  await t.test('Settings: Ingestion has GeoIP on and "Discard client IP data" off by default; the switch turns anonymize_ips on', async () => {
    await page.goto(`${url}/settings`)
    await page.getByRole('tab', { name: 'Ingestion' }).click()
    const geoip = page.getByRole('switch', { name: /Add locations \(GeoIP\)/ })
    const discard = page.getByRole('switch', { name: /Discard client IP data/ })
    assert.equal(await geoip.isChecked(), true)
    assert.equal(await discard.isChecked(), false)
    assert.ok(await page.getByRole('link', { name: 'IP Geolocation by DB-IP' }).isVisible(), 'the attribution DB-IP\'s licence asks for')
    await discard.check()
    await eventually(async () => (await app.http.inject({ url: `/api/projects/${app.projectId}/`, headers: app.auth })).json().anonymize_ips === true)
    await shot('settings-location')
    await page.goto(`${url}/settings`)
  })

  await t.test('Settings: the HTML snippet, shown first, works pasted into a plain page', async () => {
    const snippet = await page.getByLabel('HTML snippet').innerText()
    assert.match(snippet, /\/static\/array\.js/)
    const site = await servePage(t, `<!doctype html><html><head>${snippet}</head><body>
<script>posthog.set_config({ opt_out_useragent_filter: true, request_queue_config: { flush_interval_ms: 250 } }); posthog.capture('from the html snippet')</script></body></html>`)
    const other = await browser.newPage()
    await other.goto(site)
    await eventually(async () => {
      const res = await app.http.inject({ url: `/api/projects/${app.projectId}/events/?event=from%20the%20html%20snippet`, headers: app.auth })
      return res.json().results.length === 1
    })
  })

  await t.test('an unknown address shows what the app has', async () => {
    await page.goto(`${url}/surveys`)
    await page.getByRole('heading', { name: 'Page not found' }).waitFor()
    assert.ok(await page.getByRole('list', { name: 'Pages' }).getByRole('link', { name: 'Activity' }).isVisible())
    await shot('not-found')
  })
})
