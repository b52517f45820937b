import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { hasChromium, launchBrowser, servePage } from '../helpers/browser.ts'
import { eventually } from '../helpers/eventually.ts'

const skip = hasChromium ? false : 'Chromium not installed (apt-get install chromium)'
/** posthog-js must not read headless Chromium as a bot. */
const NOT_A_BOT = ['--disable-blink-features=AutomationControlled']

async function listen(app: TestApp): Promise<string> {
  await app.http.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.http.server.address() as AddressInfo).port}`
}

/** Everything the page shows in its console (errors, warnings, uncaught exceptions) and what Tally answered. */
function watch(tab: Page, tally: string) {
  const seen = { errors: [] as string[], warnings: [] as string[], fromTally: [] as string[] }
  tab.on('console', (m) => {
    if (m.type() === 'error') seen.errors.push(m.text())
    if (m.type() === 'warning') seen.warnings.push(m.text())
  })
  tab.on('pageerror', (e) => seen.errors.push(String(e)))
  tab.on('response', (r) => r.url().startsWith(tally) && seen.fromTally.push(`${r.status()} ${new URL(r.url()).pathname}`))
  return seen
}

/** A page that loads posthog-js from Tally's `/static/array.js`, as PostHog's HTML snippet does. */
function snippetPage(projectKey: string, tally: string, script: string): string {
  return `<!doctype html><html><body><script src="${tally}/static/array.js"></script>
<script>
  window.results = {}
  posthog.init(${JSON.stringify(projectKey)}, { api_host: ${JSON.stringify(tally)}, persistence: 'memory', request_queue_config: { flush_interval_ms: 250 } })
  ${script}
</script></body></html>`
}

test('posthog-js getSurveys() and loadToolbar() against Tally leave no error in the console', { skip }, async (t) => {
  const app = await buildTestApp(t)
  const tally = await listen(app)
  const site = await servePage(t, snippetPage(app.projectKey, tally, `
    posthog.getSurveys((surveys) => { window.results.surveys = surveys }, true)
    posthog.loadToolbar({})
  `))
  const browser = await launchBrowser(t, NOT_A_BOT)
  const tab = await browser.newPage()
  const seen = watch(tab, tally)
  await tab.goto(site)
  const surveys = await eventually(() => tab.evaluate(() => (window as any).results.surveys))
  assert.deepEqual(surveys, [])
  await eventually(async () => seen.warnings.some((w) => w.includes('toolbar is not available')))
  assert.ok(seen.fromTally.some((r) => r.startsWith('200 /api/surveys')), seen.fromTally.join(', '))
  assert.ok(seen.fromTally.some((r) => /^200 \/static\/(.+\/)?toolbar\.js$/.test(r)), seen.fromTally.join(', '))
  assert.deepEqual(seen.fromTally.filter((r) => !/^(200|204) /.test(r)), [])
  assert.deepEqual(seen.errors, [])
})

/**
 * A page with posthog-js (`/posthog.js`) whose `explode()` throws an uncaught error, then captures
 * "after the error". The test calls it once the SDK is ready: exception autocapture is installed only
 * after the remote config arrived and `/static/exception-autocapture.js` loaded, which under load took
 * longer than the 1.5 s the page used to wait (the error went uncaptured and the test timed out).
 */
function throwingPage(projectKey: string, tally: string): string {
  return `<!doctype html><html><body><script src="/posthog.js"></script>
<script>
  posthog.init(${JSON.stringify(projectKey)}, { api_host: ${JSON.stringify(tally)}, persistence: 'memory',
    disable_session_recording: true, request_queue_config: { flush_interval_ms: 250 },
    opt_out_useragent_filter: true }) // headless Chromium's user agent reads as a bot to posthog-js 1.449
  window.explode = () => {
    setTimeout(() => { throw new Error('checkout exploded') })
    setTimeout(() => posthog.capture('after the error'), 500)
  }
</script></body></html>`
}

async function optInExceptions(app: TestApp) {
  const res = await app.http.inject({ method: 'PATCH', url: `/api/projects/${app.projectId}/`, headers: app.auth, payload: { autocapture_exceptions_opt_in: true } })
  assert.equal(res.statusCode, 200, res.body)
}

// posthog-js 1.100 (an npm alias of the old release) has no init option for it: only /decide's config turns it on.
for (const [label, bundle] of [['1.100', 'posthog-js-1-100/dist/array.full.js'], ['installed', undefined]] as const) {
  test(`posthog-js ${label}: exception autocapture follows the project's autocapture_exceptions_opt_in`, { skip }, async (t) => {
    for (const optIn of [false, true]) {
      const app = await buildTestApp(t)
      if (optIn) await optInExceptions(app)
      const tally = await listen(app)
      const site = await servePage(t, throwingPage(app.projectKey, tally), bundle)
      const browser = await launchBrowser(t, NOT_A_BOT)
      const tab = await browser.newPage()
      const seen = watch(tab, tally)
      tab.on('console', (m) => process.env.DEBUG_BROWSER && console.log('console:', m.type(), m.text()))
      await tab.goto(site)
      // Ready: with the setting, posthog-js's handler is on window.onerror (both versions install it there);
      // without it, the SDK has had its remote config (1.100: /decide; installed: /array/<key>/config.js).
      if (optIn) await eventually(() => tab.evaluate(() => typeof window.onerror === 'function'), 300)
      else await eventually(async () => seen.fromTally.some((r) => /^200 \/(decide|array\/[^/]+\/config)/.test(r)), 300)
      if (process.env.DEBUG_BROWSER) console.log('from Tally before explode():', seen.fromTally.join(', '))
      await tab.evaluate(() => (window as any).explode())
      const events = await eventually(async () => {
        const res = await app.http.inject({ url: `/api/projects/${app.projectId}/events/?limit=100`, headers: app.auth })
        const all = res.json().results as Array<{ event: string; properties: Record<string, unknown> }>
        return all.some((e) => e.event === 'after the error') && all
      }, 300) // up to 30 s: two browsers and a server on a shared 2-core machine
      const exceptions = events.filter((e) => e.event === '$exception')
      if (!optIn) {
        assert.equal(exceptions.length, 0, 'no $exception without the setting')
        continue
      }
      await eventually(async () => {
        const res = await app.http.inject({ url: `/api/projects/${app.projectId}/events/?event=%24exception`, headers: app.auth })
        return res.json().results.length > 0
      }, 300)
      const res = await app.http.inject({ url: `/api/projects/${app.projectId}/events/?event=%24exception`, headers: app.auth })
      assert.match(JSON.stringify(res.json().results[0].properties), /checkout exploded/)
      assert.deepEqual(seen.fromTally.filter((r) => !/^(200|204) /.test(r)), [])
      assert.deepEqual(seen.errors.filter((e) => !e.includes('checkout exploded')), [], 'only the page\'s own error')
    }
  })
}
