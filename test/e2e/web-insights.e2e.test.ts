import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { CHROMIUM, hasChromium, launchBrowser } from '../helpers/browser.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { privateApi } from '../helpers/private-api.ts'
import { axeViolations, screenshot, signInWithKey, startWebTally } from '../helpers/web-app.ts'

// Not a skip: the web app's tests must fail where Chromium is missing.
assert.ok(hasChromium, `Chromium is needed at ${CHROMIUM} (apt-get install chromium)`)

const DESKTOP = { width: 1280, height: 800 }
const PHONE = { width: 390, height: 844 }

async function newPage(browser: Browser, viewport = DESKTOP): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage()
  // The machine is shared: generous waits, never a timing assertion.
  page.setDefaultTimeout(60_000)
  page.on('pageerror', (err) => console.error('page error:', err.message))
  return page
}

async function assertAccessible(page: Page, what: string): Promise<void> {
  assert.deepEqual(await axeViolations(page), [], `${what}: axe-core found serious or critical violations`)
}

async function assertFitsPhone(page: Page, what: string): Promise<void> {
  const width = await page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(width <= PHONE.width, `${what}: ${width} px wide at ${PHONE.width}`)
}

test('web dashboards: tiles show the results the server computed; Refresh asks it to recompute', async (t) => {
  const { app, url } = await startWebTally(t)
  const api = privateApi(app)
  const dashboard = (await api.post('/dashboards/', { name: 'Checkout health' })).json() as { id: number }
  // The seed: 2 people x 5 days of "checkout started", all in the last 7 days.
  const made = await api.post('/insights/', {
    name: 'Checkouts this week',
    query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'checkout started', math: 'total' }], dateRange: { date_from: '-7d' }, trendsFilter: { display: 'BoldNumber' } } },
    dashboards: [dashboard.id],
  })
  assert.equal(made.statusCode, 201, made.body)
  const browser = await launchBrowser(t)
  const page = await newPage(browser)
  const queries: string[] = []
  const reads: string[] = []
  page.on('request', (r) => {
    const path = new URL(r.url()).pathname
    if (path.endsWith('/query/')) queries.push(path)
    if (path === `/api/projects/${app.projectId}/dashboards/${dashboard.id}/` && r.method() === 'GET') reads.push(new URL(r.url()).search)
  })
  await signInWithKey(page, url, app.personalKey)

  await page.goto(`${url}/dashboards/${dashboard.id}`)
  await page.getByRole('heading', { level: 1, name: 'Checkout health' }).waitFor()
  const number = page.getByTestId('bold-number')
  assert.equal(await number.innerText(), '10')
  assert.deepEqual(queries, [], 'no tile is computed through the query API')
  assert.deepEqual(reads, ['?refresh=blocking'])
  const tile = (await api.get(`/dashboards/${dashboard.id}/`)).json().tiles[0]
  assert.equal(await page.getByTestId('last-computed').locator('time').getAttribute('datetime'), tile.insight.last_refresh, 'the oldest tile result\'s time')
  assert.match(await page.getByTestId('last-computed').innerText(), /^Last computed (less than a minute|\d+ minutes?) ago$/)
  await assertAccessible(page, 'dashboard from server results')
  await screenshot(page, 'dashboard-server-results')

  // One more checkout: the cached result stays on a reload, Refresh recomputes it.
  const res = await app.http.inject({ method: 'POST', url: '/capture/', payload: { api_key: app.projectKey, event: 'checkout started', properties: { distinct_id: 'ada@example.com' } } })
  assert.equal(res.statusCode, 200)
  await waitForEvents(app, 11, { event: 'checkout started' })
  await page.reload()
  await page.getByRole('heading', { level: 1, name: 'Checkout health' }).waitFor()
  assert.equal(await number.innerText(), '10', 'the cached result, not a recomputation')
  await page.getByRole('button', { name: 'Refresh' }).click()
  await eventually(async () => (await number.innerText()) === '11')
  assert.deepEqual(reads.slice(-1), ['?refresh=force_blocking'])
  assert.deepEqual(queries, [], 'still none through the query API')
  const after = (await api.get(`/dashboards/${dashboard.id}/`)).json().tiles[0]
  assert.ok(Date.parse(after.insight.last_refresh) >= Date.parse(tile.insight.last_refresh))
  assert.equal(await page.getByTestId('last-computed').locator('time').getAttribute('datetime'), after.insight.last_refresh)

  const phone = await newPage(browser, PHONE)
  await signInWithKey(phone, url, app.personalKey)
  await phone.goto(`${url}/dashboards/${dashboard.id}`)
  await phone.getByTestId('bold-number').waitFor()
  await assertFitsPhone(phone, 'dashboard')
  await assertAccessible(phone, 'dashboard (phone)')
})
