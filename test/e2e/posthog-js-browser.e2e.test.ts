import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { hasChromium, launchBrowser, servePage } from '../helpers/browser.ts'
import { eventually } from '../helpers/eventually.ts'

const skip = hasChromium ? false : 'Chromium not installed (apt-get install chromium)'

async function listen(app: TestApp): Promise<string> {
  await app.http.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.http.server.address() as AddressInfo).port}`
}

function page(projectKey: string, tally: string, script: string): string {
  return `<!doctype html><html><body><button id="buy" class="btn primary">Buy now</button>
<script src="/posthog.js"></script>
<script>
  window.results = {}
  posthog.init(${JSON.stringify(projectKey)}, {
    api_host: ${JSON.stringify(tally)}, persistence: 'memory', disable_session_recording: true,
    disable_surveys: true, request_queue_config: { flush_interval_ms: 250 },
    opt_out_useragent_filter: true, // headless Chromium's user agent reads as a bot
  })
  ${script}
</script></body></html>`
}

async function events(app: TestApp, query = '') {
  const res = await app.http.inject({ url: `/api/projects/${app.projectId}/events/?limit=1000${query}`, headers: app.auth })
  assert.equal(res.statusCode, 200, res.body)
  return res.json().results as Array<{ event: string; distinct_id: string; properties: Record<string, unknown>; elements_chain?: string }>
}

test('posthog-js in Chromium: pageview, custom event, autocapture and identify reach Tally', { skip }, async (t) => {
  const app = await buildTestApp(t)
  const tally = await listen(app)
  const site = await servePage(t, page(app.projectKey, tally, `
    posthog.capture('checkout started', { plan: 'pro', amount: 42 })
    setTimeout(() => document.getElementById('buy').click(), 300)
    setTimeout(() => posthog.identify('user-42', { email: 'u42@example.com' }), 600)
  `))
  const browser = await launchBrowser(t)
  const tab = await browser.newPage()
  tab.on('console', (m) => process.env.DEBUG_BROWSER && console.log('console:', m.text()))
  tab.on('response', (r) => process.env.DEBUG_BROWSER && console.log('response:', r.status(), r.url()))
  const fromTally: string[] = []
  tab.on('response', (r) => r.url().startsWith(tally) && fromTally.push(`${r.status()} ${new URL(r.url()).pathname}`))
  await tab.goto(site)

  // Up to 30 s: the browser, its batched sends and the worker's micro-batches share the CI machine with
  // the other test files (10 s were once not enough there).
  const stored = await eventually(async () => {
    const all = await events(app)
    const names = new Set(all.map((e) => e.event))
    return ['$pageview', 'checkout started', '$autocapture', '$identify'].every((n) => names.has(n)) && all
  }, 300)
  const custom = stored.find((e) => e.event === 'checkout started')!
  assert.equal(custom.properties.plan, 'pro')
  assert.equal(custom.properties.amount, 42)
  assert.equal(custom.properties.$lib, 'web')
  assert.equal(custom.properties.$current_url, `${site}/`)
  const click = stored.find((e) => e.event === '$autocapture')!
  assert.match(click.elements_chain ?? '', /^button\.btn\.primary:/)
  const identify = stored.find((e) => e.event === '$identify')!
  assert.equal(identify.distinct_id, 'user-42')
  assert.equal(identify.properties.$anon_distinct_id, custom.distinct_id)
  // Every request the SDK made to Tally succeeded.
  assert.deepEqual(fromTally.filter((r) => !/^(200|204) /.test(r)), [])
})

test('posthog-js in Chromium: flags defined through the API are seen by the browser', { skip }, async (t) => {
  const app = await buildTestApp(t)
  const create = (payload: object) =>
    app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/feature_flags/`, headers: app.auth, payload })
  assert.equal((await create({ key: 'new-checkout', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })).statusCode, 201)
  assert.equal((await create({ key: 'nobody', filters: { groups: [{ properties: [], rollout_percentage: 0 }] } })).statusCode, 201)
  assert.equal(
    (
      await create({
        key: 'banner',
        filters: {
          groups: [{ properties: [], rollout_percentage: 100, variant: 'blue' }],
          multivariate: { variants: [{ key: 'blue', rollout_percentage: 50 }, { key: 'red', rollout_percentage: 50 }] },
          payloads: { blue: '{"color":"#00f"}' },
        },
      })
    ).statusCode,
    201,
  )
  const tally = await listen(app)
  const site = await servePage(t, page(app.projectKey, tally, `
    posthog.onFeatureFlags(() => {
      window.results = {
        checkout: posthog.isFeatureEnabled('new-checkout'),
        nobody: posthog.isFeatureEnabled('nobody'),
        banner: posthog.getFeatureFlag('banner'),
        payload: posthog.getFeatureFlagPayload('banner'),
      }
    })
  `))
  const browser = await launchBrowser(t)
  const tab = await browser.newPage()
  await tab.goto(site)
  const results = await eventually(() => tab.evaluate(() => (window as any).results.checkout !== undefined && (window as any).results))
  assert.deepEqual(results, { checkout: true, nobody: false, banner: 'blue', payload: { color: '#00f' } })
})

test('posthog-js loaded from Tally\'s /static/array.js fetches its lazy extensions from /static/ without an error', { skip }, async (t) => {
  const app = await buildTestApp(t)
  const tally = await listen(app)
  const site = await servePage(t, `<!doctype html><html><body>
<script src="${tally}/static/array.js"></script>
<script>
  posthog.init(${JSON.stringify(app.projectKey)}, {
    api_host: ${JSON.stringify(tally)}, persistence: 'memory', capture_dead_clicks: true,
    request_queue_config: { flush_interval_ms: 250 }, opt_out_useragent_filter: true,
  })
  posthog.capture('from the snippet bundle')
</script></body></html>`)
  const browser = await launchBrowser(t)
  const tab = await browser.newPage()
  const fromTally: string[] = []
  const errors: string[] = []
  tab.on('response', (r) => r.url().startsWith(tally) && fromTally.push(`${r.status()} ${new URL(r.url()).pathname}`))
  tab.on('console', (m) => m.type() === 'error' && errors.push(m.text()))
  await tab.goto(site)
  await eventually(async () => (await events(app)).some((e) => e.event === 'from the snippet bundle'))
  const extensions = fromTally.filter((r) => r.includes(' /static/') && !r.endsWith('/static/array.js'))
  assert.ok(extensions.length > 0, `no extension was loaded: ${fromTally.join(', ')}`)
  assert.deepEqual(fromTally.filter((r) => !/^(200|204) /.test(r)), [])
  assert.deepEqual(errors, [])
})
