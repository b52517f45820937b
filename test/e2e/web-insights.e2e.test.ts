import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { CHROMIUM, hasChromium, launchBrowser } from '../helpers/browser.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { privateApi } from '../helpers/private-api.ts'
import { axeViolations, fillFunnelSteps, screenshot, signInWithKey, startWebTally } from '../helpers/web-app.ts'

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
  const wide = await page.evaluate(() => [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 392).slice(0, 8).map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`))
  assert.ok(width <= PHONE.width, `${what}: ${width} px wide at ${PHONE.width}: ${wide.join(' | ')}`)
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

  // The saved insight's own page shows its cached result too; only an edited query goes through /query/.
  await page.goto(`${url}/insights/${made.json().id}`)
  assert.equal(await page.getByTestId('bold-number').innerText(), '11')
  assert.deepEqual(queries, [], 'a saved insight as saved is read, not recomputed through the query API')
  await page.goto(`${url}/dashboards/${dashboard.id}`)

  const phone = await newPage(browser, PHONE)
  await signInWithKey(phone, url, app.personalKey)
  await phone.goto(`${url}/dashboards/${dashboard.id}`)
  await phone.getByTestId('bold-number').waitFor()
  await assertFitsPhone(phone, 'dashboard')
  await assertAccessible(phone, 'dashboard (phone)')

  // A member sees the owner's restricted dashboard (PostHog's restriction level 37) without its edit controls.
  assert.equal((await api.patch(`/dashboards/${dashboard.id}/`, { restriction_level: 37 })).statusCode, 200)
  const member = await app.services.projects.createUser({ email: 'mia@example.com', firstName: 'Mia', projectIds: [app.projectId] })
  const memberPage = await newPage(browser)
  await signInWithKey(memberPage, url, member.key)
  await memberPage.goto(`${url}/dashboards/${dashboard.id}`)
  assert.equal(await memberPage.getByTestId('bold-number').innerText(), '11')
  await memberPage.getByText('You can view this dashboard; only its creator and admins change it.').waitFor()
  assert.equal(await memberPage.getByLabel('Date range').isDisabled(), true)
  assert.equal(await memberPage.getByRole('button', { name: 'Add text card' }).count(), 0)
  await memberPage.getByRole('button', { name: 'Refresh' }).waitFor()
  await assertAccessible(memberPage, 'restricted dashboard (member)')
  // The owner still edits it.
  await page.reload()
  await page.getByRole('button', { name: 'Add text card' }).waitFor()
})

const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR

/**
 * Signed up -> created project -> invited teammate, four days ago (T). By hand, for the ordered
 * funnel with a 14-day window: p1, p2, p3, p4, p6, p7 sign up (6); p1 (10 min), p2 (30 min), p3 (2 h),
 * p6 (20 min), p7 (3 days) create a project (5; mean 15 h, median 30 min); p1 (+50 min) and p3 (+1 h)
 * invite (2; from signing up: 1 h and 3 h, mean 2 h). p5 only creates a project: never enters.
 * p6 cancels between the first two steps (an exclusion, and strict order, drop them); p7 takes 3 days
 * (a 2-day window drops them). Chrome: p1, p2, p6, p7; Firefox: p3, p4; Safari: p5.
 */
function funnelFixture(now: number) {
  const t0 = now - 4 * DAY
  const people: [string, string, [string, number][]][] = [
    ['p1', 'Chrome', [['signed up', 0], ['created project', 10 * MIN], ['invited teammate', HOUR]]],
    ['p2', 'Chrome', [['signed up', 0], ['created project', 30 * MIN]]],
    ['p3', 'Firefox', [['signed up', 0], ['created project', 2 * HOUR], ['invited teammate', 3 * HOUR]]],
    ['p4', 'Firefox', [['signed up', 0]]],
    ['p5', 'Safari', [['created project', 0]]],
    ['p6', 'Chrome', [['signed up', 0], ['cancelled', 5 * MIN], ['created project', 20 * MIN]]],
    ['p7', 'Chrome', [['signed up', 0], ['created project', 3 * DAY]]],
  ]
  return people.flatMap(([id, browser, events]) => events.map(([event, at]) => ({
    event, timestamp: new Date(t0 + at).toISOString(), properties: { distinct_id: id, $browser: browser },
  })))
}

/** The "Funnel steps" table as [step, persons, conversion, from previous, dropped off, avg, median] rows. */
async function funnelRows(page: Page): Promise<string[][]> {
  const table = page.getByRole('table', { name: 'Funnel steps' })
  await table.waitFor()
  return table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim())))
}

async function runAndWaitFor(page: Page, expected: (rows: string[][]) => boolean, read: (page: Page) => Promise<string[][]> = funnelRows): Promise<string[][]> {
  await page.getByRole('button', { name: 'Run' }).click()
  let last: string[][] = []
  await eventually(async () => expected((last = await read(page))), 600).catch(() => assert.fail(`unexpected rows: ${JSON.stringify(last)}`))
  return last
}

test('web funnels: steps with conversion and times, order, window, exclusions, breakdown, time to convert, trends', async (t) => {
  const { app, url } = await startWebTally(t, { seed: false })
  const batch = funnelFixture(Date.now())
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
  await waitForEvents(app, batch.length)
  const browser = await launchBrowser(t)
  const page = await newPage(browser)
  await signInWithKey(page, url, app.personalKey)
  await page.goto(`${url}/insights/new`)
  await page.getByRole('tab', { name: 'Funnels' }).click()
  await fillFunnelSteps(page, ['signed up', 'created project', 'invited teammate'])
  const counts = (rows: string[][]) => rows.map((r) => r[1]).join(',')

  await t.test('steps: persons, conversion from the first and the previous step, drop-off, times to convert', async () => {
    const rows = await runAndWaitFor(page, (r) => counts(r) === '6,5,2')
    assert.deepEqual(rows[0], ['1. signed up', '6', '100.0%', '', '', '', ''])
    assert.deepEqual(rows[1].slice(0, 5), ['2. created project', '5', '83.3%', '83.3%', '1 (16.7%)'])
    assert.deepEqual(rows[1].slice(5), ['15h', '30m'], 'mean of 10 min, 30 min, 2 h, 20 min, 3 days; median 30 min')
    assert.deepEqual(rows[2].slice(0, 6), ['3. invited teammate', '2', '33.3%', '40.0%', '3 (60.0%)', '55m'])
    await page.getByRole('img', { name: 'Funnel chart' }).waitFor()
    await assertAccessible(page, 'funnel steps')
    await screenshot(page, 'insight-funnel')
  })

  await t.test('strict order drops p6 (another event between the steps)', async () => {
    await page.getByLabel('Step order').selectOption('strict')
    await runAndWaitFor(page, (r) => counts(r) === '6,4,2')
    await page.getByLabel('Step order').selectOption('ordered')
  })

  await t.test('an exclusion between steps 1 and 2 takes p6 out of the funnel', async () => {
    await page.getByRole('button', { name: 'Add exclusion' }).click()
    await page.getByLabel('Excluded event 1').fill('cancelled')
    await page.getByLabel('Between step (exclusion 1)').selectOption({ label: '1. signed up' })
    await page.getByLabel('And step (exclusion 1)').selectOption({ label: '2. created project' })
    await runAndWaitFor(page, (r) => counts(r) === '5,4,2')
    await assertAccessible(page, 'funnel with an exclusion')
    await page.getByRole('button', { name: 'Remove exclusion 1' }).click()
  })

  await t.test('a 2-day conversion window drops p7 (3 days)', async () => {
    await page.getByLabel('Conversion window').fill('2')
    await page.getByLabel('Window unit').selectOption('day')
    await runAndWaitFor(page, (r) => counts(r) === '6,4,2')
    await page.getByLabel('Window unit').selectOption('week')
    await runAndWaitFor(page, (r) => counts(r) === '6,5,2')
    await page.getByLabel('Conversion window').fill('14')
    await page.getByLabel('Window unit').selectOption('day')
  })

  await t.test('breakdown by browser: a row per value, most entered first', async () => {
    await page.getByLabel('Breakdown by event property').fill('$browser')
    const read = async (p: Page) => {
      const table = p.getByRole('table', { name: 'Funnel by breakdown' })
      if ((await table.count()) === 0) return []
      return table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim())))
    }
    const rows = await runAndWaitFor(page, (r) => r.length === 2, read)
    assert.deepEqual(rows, [
      ['Chrome', '4', '4 (100.0%)', '1 (25.0%)', '25.0%'],
      ['Firefox', '2', '1 (50.0%)', '1 (50.0%)', '50.0%'],
    ])
    await page.getByRole('img', { name: 'Funnel chart by breakdown' }).waitFor()
    await assertAccessible(page, 'funnel by breakdown')
    await screenshot(page, 'insight-funnel-breakdown')
    await page.getByLabel('Breakdown by event property').fill('')
  })

  await t.test('time to convert: p1 in 1 h and p3 in 3 h, 2 h on average', async () => {
    await page.getByLabel('Funnel view').selectOption('time_to_convert')
    await page.getByRole('button', { name: 'Run' }).click()
    await eventually(async () => (await page.getByTestId('average-conversion-time').count()) === 1 && (await page.getByTestId('average-conversion-time').innerText()) === '2h', 600)
    const persons = await page.getByRole('table', { name: 'Time to convert' }).locator('tbody tr td:last-child').allInnerTexts()
    assert.equal(persons.reduce((a, b) => a + Number(b), 0), 2)
    await page.getByRole('img', { name: 'Time to convert chart' }).waitFor()
    await assertAccessible(page, 'time to convert')
    await screenshot(page, 'insight-funnel-time-to-convert')
    // From step 2 to 3: p1 in 50 min and p3 in 1 h.
    await page.getByLabel('From step').selectOption({ label: '2. created project' })
    await page.getByRole('button', { name: 'Run' }).click()
    await eventually(async () => (await page.getByTestId('average-conversion-time').innerText()) === '55m', 600)
  })

  await t.test('conversion trends: 2 of the 6 who entered on that day converted', async () => {
    await page.getByLabel('Funnel view').selectOption('trends')
    await page.getByLabel('From step').selectOption({ label: '1. signed up' })
    const read = async (p: Page) => {
      const table = p.getByRole('table', { name: 'Conversion by period' })
      if ((await table.count()) === 0) return []
      return table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim())))
    }
    const rows = await runAndWaitFor(page, (r) => r.length > 0, read)
    assert.deepEqual(rows.map((r) => r[1]).filter((v) => v !== '0.0%'), ['33.3%'], JSON.stringify(rows))
    await page.getByRole('img', { name: 'Conversion trends chart' }).waitFor()
    await assertAccessible(page, 'conversion trends')
  })

  await t.test('saved with its funnel settings; fits a phone', async () => {
    await page.getByLabel('Funnel view').selectOption('steps')
    await page.getByLabel('Step order').selectOption('strict')
    await page.getByLabel('Window unit').selectOption('hour')
    await page.getByLabel('Name').fill('Activation funnel')
    await page.getByRole('button', { name: 'Save insight' }).click()
    await page.getByRole('heading', { level: 1, name: 'Activation funnel' }).waitFor()
    const saved = (await privateApi(app).get('/insights/')).json().results.find((i: { name: string }) => i.name === 'Activation funnel')
    assert.deepEqual(saved.query.source.funnelsFilter, { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'hour', funnelOrderType: 'strict', funnelVizType: 'steps' })
    assert.deepEqual(saved.query.source.series.map((s: { event: string }) => s.event), ['signed up', 'created project', 'invited teammate'])
    // Within 14 hours, strict: p7 (3 days) and p6 (an event between) drop at step 2.
    assert.equal(counts(await funnelRows(page)), '6,3,2')

    const phone = await newPage(browser, PHONE)
    await signInWithKey(phone, url, app.personalKey)
    await phone.goto(`${url}/insights/${saved.id}`)
    await phone.getByRole('table', { name: 'Funnel steps' }).waitFor()
    await assertFitsPhone(phone, 'funnel insight')
    await assertAccessible(phone, 'funnel insight (phone)')
    await screenshot(phone, 'insight-funnel-phone')

    // On a dashboard, the tile draws the funnel the server computed for the dashboard.
    const api = privateApi(app)
    const dashboard = (await api.post('/dashboards/', { name: 'Activation' })).json() as { id: number }
    assert.equal((await api.patch(`/insights/${saved.id}/`, { dashboards: [dashboard.id] })).statusCode, 200)
    await page.goto(`${url}/dashboards/${dashboard.id}`)
    await page.getByRole('img', { name: 'Funnel chart' }).waitFor()
    const tile = (await api.get(`/dashboards/${dashboard.id}/`)).json().tiles[0]
    assert.deepEqual(tile.insight.result.map((s: { count: number }) => s.count), [6, 3, 2])
  })
})

/**
 * "opened app" at noon (UTC) some days ago: u1 on days -5, -4, -2; u2 on -5, -3; u3 on -4, -3, -2, -1;
 * u4 on -2. First time, by day: cohort -5 is u1 and u2 (back: u1 on +1 and +3, u2 on +2), cohort -4
 * is u3 (back on +1, +2, +3), cohort -2 is u4 (never back). Recurring: day -4 is u1 and u3 (back: u3
 * on +1, both on +2, u3 on +3).
 */
function retentionFixture(today: number) {
  const days: [string, number[]][] = [['u1', [5, 4, 2]], ['u2', [5, 3]], ['u3', [4, 3, 2, 1]], ['u4', [2]]]
  return days.flatMap(([id, ago]) => ago.map((d) => ({ event: 'opened app', timestamp: new Date(today - d * DAY + 12 * HOUR).toISOString(), properties: { distinct_id: id } })))
}

/** The "Retention" grid as rows of [cohort, size, % per period...] (the first row is the mean). */
async function retentionRows(page: Page): Promise<string[][]> {
  const table = page.getByRole('table', { name: 'Retention' })
  if ((await table.count()) === 0) return []
  return table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('th, td')].map((c) => (c.textContent ?? '').trim())))
}

test('web retention: a cohort per day of the range with sizes and heat, periods not begun left blank, mean curve, first-time and recurring', async (t) => {
  const { app, url } = await startWebTally(t, { seed: false })
  const today = Math.floor(Date.now() / DAY) * DAY
  const batch = retentionFixture(today)
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
  await waitForEvents(app, batch.length)
  const browser = await launchBrowser(t)
  const page = await newPage(browser)
  await signInWithKey(page, url, app.personalKey)
  await page.goto(`${url}/insights/new`)
  await page.getByRole('tab', { name: 'Retention' }).click()
  await page.getByLabel('First event').fill('opened app')
  const day = (ago: number) => new Date(today - ago * DAY).toISOString().slice(0, 10)
  const row = (rows: string[][], ago: number) => rows.find((r) => r[0] === day(ago))

  await t.test('first time, last 7 days, 8 periods: each cohort\'s size and share back per day, and the mean', async () => {
    await page.getByLabel('Periods per cohort').fill('8')
    const rows = await runAndWaitFor(page, (r) => r.length === 9, retentionRows)
    assert.deepEqual(rows.map((r) => r[0]), ['Mean', ...[7, 6, 5, 4, 3, 2, 1, 0].map(day)])
    assert.deepEqual(row(rows, 5), [day(5), '2', '100%', '50%', '50%', '50%', '0%', '0%', '', ''])
    assert.deepEqual(row(rows, 4), [day(4), '1', '100%', '100%', '100%', '100%', '0%', '', '', ''])
    assert.deepEqual(row(rows, 2), [day(2), '1', '100%', '0%', '0%', '', '', '', '', ''])
    assert.deepEqual(row(rows, 3)?.slice(1, 2), ['0'], 'no one did it first on day -3')
    // Mean over the non-empty cohorts that reached each period: (50+100+0)/3, (50+100+0)/3, (50+100)/2...
    assert.deepEqual(rows[0].slice(2, 7), ['100.0%', '50.0%', '50.0%', '75.0%', '0.0%'])
    await page.getByRole('img', { name: 'Retention curve' }).waitFor()
    await assertAccessible(page, 'retention')
    await screenshot(page, 'insight-retention')
  })

  await t.test('recurring: every day someone came is a cohort', async () => {
    await page.getByLabel('Retention type').selectOption({ label: 'Recurring' })
    const rows = await runAndWaitFor(page, (r) => row(r, 4)?.[1] === '2', retentionRows)
    assert.deepEqual(row(rows, 4), [day(4), '2', '100%', '50%', '100%', '50%', '0%', '', '', ''])
    assert.deepEqual(row(rows, 0), [day(0), '0', '0%', '', '', '', '', '', '', ''], 'today: only its own period has begun')
    assert.deepEqual(row(rows, 2)?.slice(0, 4), [day(2), '3', '100%', '33%'])
  })

  await t.test('4 periods: a cohort per day of the range, 4 periods each; saved with its settings; fits a phone', async () => {
    await page.getByLabel('Periods per cohort').fill('4')
    const rows = await runAndWaitFor(page, (r) => r.length === 9 && r[0].length === 2 + 4, retentionRows)
    assert.deepEqual(rows.map((r) => r[0]), ['Mean', ...[7, 6, 5, 4, 3, 2, 1, 0].map(day)])
    assert.deepEqual(row(rows, 4), [day(4), '2', '100%', '50%', '100%', '50%'])
    await page.getByLabel('Name').fill('Comeback')
    await page.getByRole('button', { name: 'Save insight' }).click()
    await page.getByRole('heading', { level: 1, name: 'Comeback' }).waitFor()
    const saved = (await privateApi(app).get('/insights/')).json().results.find((i: { name: string }) => i.name === 'Comeback')
    assert.equal(saved.query.source.retentionFilter.retentionType, 'retention_recurring')
    assert.equal(saved.query.source.retentionFilter.totalIntervals, 4)
    const phone = await newPage(browser, PHONE)
    await signInWithKey(phone, url, app.personalKey)
    await phone.goto(`${url}/insights/${saved.id}`)
    await phone.getByRole('table', { name: 'Retention' }).waitFor()
    await assertFitsPhone(phone, 'retention insight')
    await assertAccessible(phone, 'retention insight (phone)')
  })
})

test('web insights: a total-value display (ActionsPie) lists each series\' aggregated_value, not its count of 0', async (t) => {
  const { app, url } = await startWebTally(t)
  // The seed: 2 people x 5 days of "checkout started", all in the last 7 days.
  const made = await privateApi(app).post('/insights/', {
    name: 'Checkouts by share',
    query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'checkout started', math: 'total' }], dateRange: { date_from: '-7d' }, trendsFilter: { display: 'ActionsPie' } } },
  })
  assert.equal(made.statusCode, 201, made.body)
  const browser = await launchBrowser(t)
  const page = await newPage(browser)
  await signInWithKey(page, url, app.personalKey)
  await page.goto(`${url}/insights/${made.json().id}`)
  const totals = page.getByRole('table', { name: 'Series totals' })
  await totals.waitFor()
  assert.deepEqual(await totals.getByRole('cell').allInnerTexts(), ['checkout started', '10'])
})
