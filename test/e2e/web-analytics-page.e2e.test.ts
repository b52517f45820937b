import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { CHROMIUM, hasChromium, launchBrowser } from '../helpers/browser.ts'
import { eventually } from '../helpers/eventually.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import type { TestApp } from '../helpers/test-app.ts'
import { axeViolations, screenshot, signInWithKey, startWebTally } from '../helpers/web-app.ts'

// Not a skip: the web app's tests must fail where Chromium is missing.
assert.ok(hasChromium, `Chromium is needed at ${CHROMIUM} (apt-get install chromium)`)

const DESKTOP = { width: 1280, height: 900 }
const PHONE = { width: 390, height: 844 }
const HOST = 'https://shop.example.com'
const HOUR = 3_600_000
const DAY = 24 * HOUR

/** A visitor's browser: what posthog-js puts on each of its events. */
interface Visitor { id: string; browser: string; os: string; device: string; country: string; language: string; timezone: string }
const ADA: Visitor = { id: 'ada', browser: 'Chrome', os: 'Mac OS X', device: 'Desktop', country: 'GB', language: 'en-GB', timezone: 'Europe/London' }
const BEN: Visitor = { id: 'ben', browser: 'Chrome', os: 'Android', device: 'Mobile', country: 'US', language: 'en-US', timezone: 'America/New_York' }
const CAT: Visitor = { id: 'cat', browser: 'Safari', os: 'Mac OS X', device: 'Desktop', country: 'US', language: 'en-US', timezone: 'America/Chicago' }
const DAN: Visitor = { id: 'dan', browser: 'Firefox', os: 'Linux', device: 'Desktop', country: 'DE', language: 'de-DE', timezone: 'Europe/Berlin' }

/** One session: its visitor, where it came from, and its events as [seconds after its start, event, path]. */
interface SeedSession { id: string; visitor: Visitor; startsAgo: number; referrer: string; utm?: Record<string, string>; steps: [number, string, string][] }

/**
 * Four sessions in the last 7 days and one in the 7 before (the compare period). By PostHog's rules:
 * visitors 3 (ada, ben, cat), views 8, sessions 4, durations 120 s, 0 s, 5 s, 300 s (mean 106.25 s:
 * "1m 46s"), one bounce (ben's single page view) of 4 sessions: 25%. The previous period: 1 visitor,
 * 1 view, 1 session, a bounce (100%).
 */
const SESSIONS: SeedSession[] = [
  { id: 's1-ada-search', visitor: ADA, startsAgo: 2 * DAY, referrer: 'https://www.google.com/search?q=shop', steps: [[0, '$pageview', '/'], [120, '$pageview', '/pricing']] },
  { id: 's2-ben-direct', visitor: BEN, startsAgo: 2 * DAY - 3 * HOUR, referrer: '$direct', steps: [[0, '$pageview', '/']] },
  { id: 's3-ada-email', visitor: ADA, startsAgo: DAY, referrer: '$direct', utm: { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring' }, steps: [[0, '$pageview', '/blog'], [5, '$pageview', '/blog/post']] },
  { id: 's4-cat-referral', visitor: CAT, startsAgo: DAY - 2 * HOUR, referrer: 'https://blog.example.org/review', steps: [[0, '$pageview', '/pricing'], [100, '$pageview', '/docs'], [200, 'clicked signup', '/docs'], [300, '$pageview', '/pricing']] },
  { id: 's5-dan-before', visitor: DAN, startsAgo: 10 * DAY, referrer: '$direct', steps: [[0, '$pageview', '/']] },
]

function seedEvents(now: number): object[] {
  return SESSIONS.flatMap((s) => s.steps.map(([after, event, path]) => {
    const v = s.visitor
    const referringDomain = s.referrer === '$direct' ? '$direct' : new URL(s.referrer).hostname
    return {
      event,
      timestamp: new Date(now - s.startsAgo + after * 1000).toISOString(),
      properties: {
        distinct_id: v.id, $session_id: s.id, $window_id: `${s.id}-w`, $lib: 'web', $host: 'shop.example.com',
        $current_url: `${HOST}${path}`, $pathname: path, $referrer: s.referrer, $referring_domain: referringDomain,
        $browser: v.browser, $os: v.os, $device_type: v.device, $browser_language: v.language, $timezone: v.timezone,
        $geoip_country_code: v.country, $geoip_disable: true, ...s.utm,
      },
    }
  }))
}

/** Sends the sessions' events, timed from now; the `now` they were timed from. */
async function seed(app: TestApp): Promise<number> {
  const now = Date.now()
  const batch = seedEvents(now)
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
  await waitForEvents(app, batch.length)
  return now
}

/**
 * The conversion rate of the day (UTC, the project's zone) of the seed's one 'clicked signup': one
 * converter over the visitors with a page view that day, as the trend's `A / B` formula gives it.
 */
function signupDayRate(now: number): string {
  const at = (s: SeedSession, after: number) => now - s.startsAgo + after * 1000
  const dayOf = (ms: number) => Math.floor(ms / DAY)
  const signup = SESSIONS.flatMap((s) => s.steps.filter(([, event]) => event === 'clicked signup').map(([after]) => at(s, after)))[0]!
  const visitors = new Set(SESSIONS.flatMap((s) => s.steps.filter(([after, event]) => event === '$pageview' && dayOf(at(s, after)) === dayOf(signup)).map(() => s.visitor.id)))
  return `${(100 / visitors.size).toFixed(1)}%`
}

/** A table's rows as "value cell cell…" lines, every column, once it has `rows` rows. */
async function allCells(page: Page, name: string, rows: number): Promise<string[]> {
  const table = page.getByRole('table', { name, exact: true })
  const read = () => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim()).join(' ')))
  await eventually(async () => (await read()).length === rows, 600).catch(async () => {
    throw new Error(`table ${name}: expected ${rows} rows, shows ${JSON.stringify(await read().catch(() => null))}`)
  })
  return read()
}

/** The trend's summary line once it reads `pattern`. */
async function trendSummary(page: Page, pattern: RegExp): Promise<string> {
  const line = page.getByTestId('trend-goal-summary')
  const read = () => line.innerText().catch(() => '')
  await eventually(async () => pattern.test(await read()), 600).catch(async () => {
    throw new Error(`trend summary: expected ${pattern}, shows ${JSON.stringify(await read())}`)
  })
  return read()
}

async function newPage(browser: Browser, viewport = DESKTOP): Promise<Page> {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  page.setDefaultTimeout(60_000) // the machine is shared: generous waits, never a timing assertion
  page.on('pageerror', (err) => console.error('page error:', err.message))
  return page
}

/** The overview tiles' values by title, once they show `expect`'s visitors (a fresh answer, not the last one). */
async function tiles(page: Page, visitors: string): Promise<Record<string, string>> {
  const overview = page.getByRole('region', { name: 'Overview' })
  await eventually(async () => (await overview.getByTestId('web-tile-visitors').innerText().catch(() => '')) === visitors, 600)
  const out: Record<string, string> = {}
  for (const title of ['Visitors', 'Page views', 'Sessions', 'Session duration', 'Bounce rate']) {
    out[title] = (await overview.getByRole('group', { name: title }).locator('.stat').innerText()).trim()
  }
  return out
}

/** The conversion-goal tiles' values by title, once they are shown. */
async function conversionTiles(page: Page): Promise<Record<string, string>> {
  const overview = page.getByRole('region', { name: 'Overview' })
  await eventually(async () => (await overview.getByTestId('web-tile-conversion-rate').innerText().catch(() => '')) !== '', 600)
  const out: Record<string, string> = {}
  for (const title of ['Visitors', 'Total conversions', 'Unique conversions', 'Conversion rate']) {
    out[title] = (await overview.getByRole('group', { name: title }).locator('.stat').innerText()).trim()
  }
  return out
}

/** A breakdown table's rows as "value visitors views" lines (bounce rate left out), once it has `rows` rows. */
async function tableRows(page: Page, name: string, rows: number): Promise<string[]> {
  const table = page.getByRole('table', { name, exact: true })
  const read = () => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 3).map((td) => td.textContent?.trim()).join(' ')))
  await eventually(async () => (await read()).length === rows, 600).catch(async () => {
    throw new Error(`table ${name}: expected ${rows} rows, shows ${JSON.stringify(await read().catch(() => null))}`)
  })
  return read()
}

async function assertAccessible(page: Page, what: string): Promise<void> {
  assert.deepEqual(await axeViolations(page), [], `${what}: axe-core found serious or critical violations`)
}

test('web analytics page: numbers from seeded sessions, row clicks filter, session detail, phone width, axe-core', async (t) => {
  const { app, url } = await startWebTally(t, { seed: false })
  const seededAt = await seed(app)
  const browser = await launchBrowser(t)
  const page = await newPage(browser)

  await t.test('signing in lands on Web analytics once there are page views', async () => {
    await signInWithKey(page, url, app.personalKey)
    await page.getByRole('heading', { level: 1, name: 'Web analytics' }).waitFor()
    assert.match(page.url(), /\/web$/)
  })

  await t.test('the overview tiles show the seeded numbers and the change from the previous period', async () => {
    assert.deepEqual(await tiles(page, '3'), { Visitors: '3', 'Page views': '8', Sessions: '4', 'Session duration': '1m 46s', 'Bounce rate': '25%' })
    const visitors = await page.getByRole('group', { name: 'Visitors' }).innerText()
    assert.match(visitors, /▲ 200%/, 'three visitors against one before')
    assert.match(visitors, /was 1\b/)
    assert.match(await page.getByRole('group', { name: 'Bounce rate' }).innerText(), /was 100%/)
  })

  await t.test('the trend counts the page views of the range', async () => {
    assert.match(await page.getByTestId('trend-views-total').innerText(), /Page views in the range: 8$/)
    await page.getByRole('img', { name: 'Visitors and views over time' }).waitFor()
  })

  await t.test('the breakdown tables: pages, entry paths, channels, devices, countries', async () => {
    // Rows as the server orders them (PostHog orders by the [current, previous] pairs); compared as sets here.
    assert.deepEqual((await tableRows(page, 'Pages', 5)).sort(), ['/ 2 2', '/blog 1 1', '/blog/post 1 1', '/docs 1 1', '/pricing 2 3'])
    await page.getByRole('tab', { name: 'Entry paths' }).click()
    const entries = await tableRows(page, 'Entry paths', 3)
    assert.deepEqual(entries.map((r) => r.split(' ').slice(0, 2).join(' ')).sort(), ['/ 2', '/blog 1', '/pricing 1'])
    await page.getByRole('tab', { name: 'Channels' }).click()
    const channels = (await tableRows(page, 'Channels', 4)).map((r) => r.replace(/ \d+ \d+$/, '')).sort()
    assert.deepEqual(channels, ['Direct', 'Email', 'Organic Search', 'Referral'])
    await page.getByRole('tab', { name: 'Device type' }).click()
    assert.deepEqual(await tableRows(page, 'Device type', 2), ['Desktop 2 7', 'Mobile 1 1'])
    // dan (DE) visited in the previous period only: his row shows 0 now.
    assert.deepEqual((await tableRows(page, 'Countries', 3)).sort(), ['DE 0 0', 'GB 1 4', 'US 2 4'])
    // The map loads once its card is in view.
    await page.getByRole('table', { name: 'Countries', exact: true }).scrollIntoViewIfNeeded()
    const map = page.getByRole('img', { name: /^World map of visitors by country: / })
    await map.waitFor()
    assert.deepEqual((await map.getAttribute('aria-label'))!.split(': ')[1]!.split(', ').sort(), ['DE 0', 'GB 1', 'US 2'])
    await assertAccessible(page, 'web analytics')
    await screenshot(page, 'web-analytics')
  })

  await t.test('clicking a row filters the whole page by it; removing the filter restores it', async () => {
    await page.getByRole('table', { name: 'Device type', exact: true }).getByRole('button', { name: 'Mobile' }).click()
    await page.getByRole('list', { name: 'Filters' }).getByText('$device_type').waitFor()
    assert.match(decodeURIComponent(page.url()), /"key":"\$device_type","type":"event","operator":"exact","value":\["Mobile"\]/)
    assert.deepEqual(await tiles(page, '1'), { Visitors: '1', 'Page views': '1', Sessions: '1', 'Session duration': '0s', 'Bounce rate': '100%' })
    await page.getByRole('tab', { name: 'Pages' }).click()
    assert.deepEqual(await tableRows(page, 'Pages', 1), ['/ 1 1'])
    await screenshot(page, 'web-analytics-filtered')
    await page.getByRole('button', { name: 'Remove filter $device_type = Mobile' }).click()
    assert.equal((await tiles(page, '3'))['Page views'], '8')

    await page.getByRole('table', { name: 'Pages', exact: true }).getByRole('button', { name: '/pricing' }).click()
    const filtered = await tiles(page, '2')
    assert.equal(filtered['Page views'], '3', 'the /pricing views of ada and cat')
    assert.equal(filtered.Sessions, '2')
    // Back in history: the filter was an address, so the browser's Back undoes it.
    await page.goBack()
    assert.equal((await tiles(page, '3'))['Page views'], '8')

    // A session property: the channel ada's newsletter session came through.
    await page.getByRole('tab', { name: 'Channels' }).click()
    await page.getByRole('table', { name: 'Channels', exact: true }).getByRole('button', { name: 'Email', exact: true }).click()
    assert.deepEqual(await tiles(page, '1'), { Visitors: '1', 'Page views': '2', Sessions: '1', 'Session duration': '5s', 'Bounce rate': '0%' })
    await page.getByRole('note').getByText(/\$channel_type/).waitFor()
    await page.getByRole('button', { name: 'Clear filters' }).click()
    assert.equal((await tiles(page, '3'))['Page views'], '8')
  })

  await t.test('a conversion goal (a custom event, then an action) turns the tiles into PostHog\'s conversion tiles', async () => {
    // An action made elsewhere shows in the picker once the page loads again.
    const created = await app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/actions/`, headers: app.auth, payload: { name: 'Signed up', steps: [{ event: 'clicked signup' }] } })
    assert.equal(created.statusCode, 201, created.body)
    await page.reload()
    const goal = page.getByLabel('Conversion goal')
    // cat's 'clicked signup' is the one conversion among 3 visitors; dan, the previous period's one visitor, had none.
    const expected = { Visitors: '3', 'Total conversions': '1', 'Unique conversions': '1', 'Conversion rate': '33.3%' }
    await goal.selectOption({ label: 'clicked signup' })
    assert.equal(new URL(page.url()).searchParams.get('goal'), 'event:clicked signup')
    assert.deepEqual(await conversionTiles(page), expected)
    assert.match(await page.getByRole('group', { name: 'Conversion rate' }).innerText(), /was 0%/)

    // The tables show PostHog's goal columns; cat's signup on /docs is the one conversion, so /docs
    // leads (ordered by unique conversions, then total conversions, then visitors with the previous
    // period's: dan's / before /pricing).
    const pages = page.getByRole('table', { name: 'Pages', exact: true })
    await pages.getByRole('columnheader', { name: 'Unique conversions' }).waitFor()
    assert.deepEqual(await pages.locator('thead th').allTextContents(), ['Path', 'Visitors', 'Total conversions', 'Unique conversions', 'Conversion rate'])
    assert.deepEqual(await allCells(page, 'Pages', 5), ['/docs 1 1 1 100.0%', '/ 2 0 0 0.0%', '/pricing 2 0 0 0.0%', '/blog 1 0 0 0.0%', '/blog/post 1 0 0 0.0%'])

    // The trend turns to the goal, on its unique conversions first (as PostHog's graphs tab does).
    const trendTabs = page.getByRole('tablist', { name: 'Trend' })
    assert.equal(await trendTabs.getByRole('tab', { name: 'Unique conversions' }).getAttribute('aria-selected'), 'true')
    await page.getByRole('img', { name: 'Unique conversions over time' }).waitFor()
    assert.equal(await trendSummary(page, /^Highest/), 'Highest in one day: 1')
    await trendTabs.getByRole('tab', { name: 'Total conversions' }).click()
    assert.equal(await trendSummary(page, /^Conversions/), 'Conversions in the range: 1')
    await trendTabs.getByRole('tab', { name: 'Conversion rate' }).click()
    await page.getByRole('img', { name: 'Conversion rate over time' }).waitFor()
    assert.equal(await trendSummary(page, /%$/), `Highest in one day: ${signupDayRate(seededAt)}`)
    await assertAccessible(page, 'web analytics with a conversion goal')
    await screenshot(page, 'web-analytics-goal')
    await goal.selectOption({ label: 'None' })
    assert.equal((await tiles(page, '3'))['Page views'], '8')
    assert.match(await page.getByTestId('trend-views-total').innerText(), /Page views in the range: 8$/)
    await goal.selectOption({ label: 'Signed up' })
    assert.equal(new URL(page.url()).searchParams.get('goal'), `action:${created.json().id}`)
    assert.deepEqual(await conversionTiles(page), expected)
    assert.equal((await allCells(page, 'Pages', 5))[0], '/docs 1 1 1 100.0%')
    assert.equal(await trendSummary(page, /^Highest/), 'Highest in one day: 1', 'a new goal starts on unique conversions')
    await goal.selectOption({ label: 'None' })
    assert.equal((await tiles(page, '3'))['Page views'], '8')
  })

  await t.test('a session: its events in order, duration, entry and exit pages; from the page, a person and an event', async () => {
    const sessions = page.getByRole('table', { name: 'Latest sessions' })
    await sessions.getByRole('link', { name: 's4-cat-referral' }).click()
    await page.getByRole('heading', { level: 1, name: 'Session' }).waitFor()
    assert.equal(await page.getByTestId('session-duration').innerText(), '5m')
    assert.equal(await page.getByTestId('session-entry').innerText(), `${HOST}/pricing`)
    assert.equal(await page.getByTestId('session-exit').innerText(), `${HOST}/pricing`)
    const steps = await page.getByRole('list', { name: 'Session events' }).locator('li').evaluateAll((lis) => lis.map((li) => li.textContent))
    assert.deepEqual(steps, ['+0s$pageview/pricing', '+1m 40s$pageview/docs', '+3m 20sclicked signup/docs', '+5m$pageview/pricing'])
    await assertAccessible(page, 'session')
    await screenshot(page, 'session')

    // From the person: cat's events link to her session.
    await page.getByRole('link', { name: 'cat', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: 'cat' }).waitFor()
    await page.getByRole('table', { name: 'Person events' }).getByRole('link', { name: /^Session of \$pageview/ }).first().click()
    await page.getByRole('heading', { level: 1, name: 'Session' }).waitFor()
    assert.match(await page.getByRole('main').innerText(), /s4-cat-referral/)

    // From an event on Activity.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Activity', exact: true }).click()
    await page.getByRole('table', { name: 'Events' }).getByRole('button', { name: 'clicked signup' }).click()
    await page.getByRole('link', { name: 'View session' }).click()
    await page.getByTestId('session-duration').waitFor()
    assert.match(page.url(), /\/sessions\/s4-cat-referral$/)
  })

  await t.test('the Product analytics template makes its landing-pages tile', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboards', exact: true }).click()
    await page.getByLabel('Start from').selectOption({ label: 'Template: Product analytics' })
    await page.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('heading', { level: 1, name: 'Product analytics' }).waitFor()
    // The template's range is 30 days: the 5th session (10 days ago, on /) counts too.
    const rows = await tableRows(page, 'Entry paths', 3)
    assert.deepEqual(rows.map((r) => r.split(' ').slice(0, 2).join(' ')).sort(), ['/ 3', '/blog 1', '/pricing 1'])
    await screenshot(page, 'dashboard-product-analytics')
  })

  await t.test('"Exclude test accounts" keeps what the project\'s test-account filters match (set in Settings, as PostHog\'s)', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings', exact: true }).click()
    const card = page.locator('.card', { has: page.getByRole('heading', { name: 'Test accounts' }) })
    await card.getByLabel('Test account property of').selectOption('event')
    await card.getByLabel('Test account property', { exact: true }).fill('$browser')
    await card.getByLabel('Test account operator').selectOption('is_not')
    await card.getByLabel('Test account value').fill('Safari')
    await card.getByRole('button', { name: 'Add filter' }).click()
    await card.getByRole('list', { name: 'Test account filters' }).getByText('$browser').waitFor()
    const stored = await eventually(async () => {
      const filters = (await app.http.inject({ url: `/api/projects/${app.projectId}/`, headers: app.auth })).json().test_account_filters
      return filters.length === 1 && filters
    })
    assert.deepEqual(stored, [{ type: 'event', key: '$browser', operator: 'is_not', value: 'Safari' }])
    await assertAccessible(page, 'settings with a test account filter')

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Web analytics', exact: true }).click()
    assert.equal((await tiles(page, '3'))['Page views'], '8', 'off by default')
    await page.getByLabel('Exclude test accounts').check()
    // Real users browse with anything but Safari: cat (Safari) is left out; ada and ben, their 3 sessions and 5 page views.
    assert.deepEqual(await tiles(page, '2'), { Visitors: '2', 'Page views': '5', Sessions: '3', 'Session duration': '42s', 'Bounce rate': '33.3%' })
    await page.getByLabel('Exclude test accounts').uncheck()
    assert.equal((await tiles(page, '3'))['Page views'], '8')
  })

  await t.test('at phone width the page fits, its tiles and tables are there, and it passes axe-core', async () => {
    const phone = await newPage(browser, PHONE)
    await signInWithKey(phone, url, app.personalKey)
    await phone.getByRole('heading', { level: 1, name: 'Web analytics' }).waitFor()
    assert.equal((await tiles(phone, '3'))['Page views'], '8')
    await tableRows(phone, 'Pages', 5)
    const width = await phone.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(width <= PHONE.width, `no sideways scrolling at ${PHONE.width} px (page is ${width} px wide)`)
    await assertAccessible(phone, 'web analytics at phone width')
    await screenshot(phone, 'web-analytics-phone')
  })
})
