import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { CHROMIUM, hasChromium, launchBrowser } from '../helpers/browser.ts'
import { eventually } from '../helpers/eventually.ts'
import { privateApi } from '../helpers/private-api.ts'
import { axeViolations, screenshot, signInWithKey, startWebTally } from '../helpers/web-app.ts'

// Not a skip: the web app's tests must fail where Chromium is missing.
assert.ok(hasChromium, `Chromium is needed at ${CHROMIUM} (apt-get install chromium)`)

const DESKTOP = { width: 1280, height: 800 }
const PHONE = { width: 390, height: 844 }

async function newPage(browser: Browser, viewport = DESKTOP): Promise<Page> {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  // The machine is shared: generous waits, never a timing assertion.
  page.setDefaultTimeout(60_000)
  page.on('pageerror', (err) => console.error('page error:', err.message))
  return page
}

/** Opens a section from the navigation (as a user does) and waits for its heading. */
async function open(page: Page, link: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link, exact: true }).click()
  await page.getByRole('heading', { level: 1, name: heading }).waitFor()
}

async function assertAccessible(page: Page, what: string): Promise<void> {
  const found = await axeViolations(page)
  assert.deepEqual(found, [], `${what}: axe-core found serious or critical violations`)
}

test('web app: each page shows the seeded data, passes axe-core, and its main flows work', async (t) => {
  const { app, url, seed } = await startWebTally(t)
  const api = privateApi(app)
  const browser = await launchBrowser(t)
  const page = await newPage(browser)

  await t.test('signed out, / leads to the sign-in page', async () => {
    await page.goto(url)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    assert.match(page.url(), /\/login\?next=/)
    await assertAccessible(page, 'sign-in')
    await screenshot(page, 'sign-in')
  })

  await t.test('sign in with a personal API key', async () => {
    await signInWithKey(page, url, app.personalKey)
    // The seed has page views: the first page is Web analytics.
    await page.getByRole('heading', { level: 1, name: 'Web analytics' }).waitFor()
    assert.match(page.url(), /\/web$/)
  })

  await t.test('Activity: newest events, details on click, filters, new events arrive without reload', async () => {
    await open(page, 'Activity', 'Activity')
    const table = page.getByRole('table', { name: 'Events' })
    await table.getByText('checkout started').first().waitFor()
    assert.equal(await table.getByRole('row').count(), 1 + 50, 'a first page of 50 events')
    await page.getByRole('button', { name: 'Load older events' }).click()
    await eventually(async () => (await table.getByRole('row').count()) === 1 + seed.events)
    assert.equal(await page.getByRole('button', { name: 'Load older events' }).count(), 0, 'no more pages')
    await table.getByRole('button', { name: '$autocapture' }).click()
    const props = page.getByRole('table', { name: 'Event properties' })
    await props.getByText('$event_type').waitFor()
    assert.match(await page.getByRole('list', { name: 'Elements' }).innerText(), /button\.btn\.primary “Buy now”/)
    await assertAccessible(page, 'activity')
    await screenshot(page, 'activity')

    await page.getByLabel('Event', { exact: true }).fill('checkout started')
    await page.getByRole('button', { name: 'Filter' }).click()
    await eventually(async () => (await table.getByRole('button', { name: '$pageview' }).count()) === 0 && (await table.getByRole('button', { name: 'checkout started' }).count()) === 10, 600)
    await page.getByRole('button', { name: 'Clear' }).click()

    const res = await app.http.inject({ method: 'POST', url: '/capture/', payload: { api_key: app.projectKey, event: 'arrived live', properties: { distinct_id: 'live-user' } } })
    assert.equal(res.statusCode, 200)
    await table.getByRole('button', { name: 'arrived live' }).waitFor()
  })

  await t.test('People: search, a person\'s properties, distinct ids and events; delete with events', async () => {
    await open(page, 'People', 'People')
    const people = page.getByRole('table', { name: 'People' })
    await people.getByRole('link', { name: 'ada@example.com' }).waitFor()
    const listed = await people.innerText()
    for (const email of ['ada@example.com', 'grace@example.com', 'linus@example.org']) assert.ok(listed.includes(email), `${email} in ${listed}`)
    await page.getByLabel('Search by email, name or distinct id').fill('grace')
    await page.getByRole('button', { name: 'Search' }).click()
    await eventually(async () => (await people.getByRole('row').count()) === 2)
    assert.match(await people.innerText(), /grace@example\.com/)
    await page.getByLabel('Search by email, name or distinct id').fill('')
    await page.getByRole('button', { name: 'Search' }).click()
    await people.getByRole('link', { name: 'ada@example.com' }).click()
    await page.getByRole('heading', { level: 1, name: 'ada@example.com' }).waitFor()
    assert.match(await page.getByRole('table', { name: 'Person properties' }).innerText(), /plan\s+pro/)
    await page.getByText('anon-device-ada').waitFor() // the merged anonymous id
    await page.getByRole('table', { name: 'Person events' }).getByText('checkout started').first().waitFor()
    await assertAccessible(page, 'person')
    await screenshot(page, 'person')

    await open(page, 'People', 'People')
    await people.getByRole('link', { name: 'linus@example.org' }).click()
    await page.getByRole('heading', { level: 1, name: 'linus@example.org' }).waitFor()
    page.once('dialog', (d) => void d.accept())
    await page.getByRole('button', { name: 'Delete with events', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: 'People' }).waitFor()
    await eventually(async () => (await api.get('/persons/?search=linus')).json().results.length === 0)
    await eventually(async () => (await app.http.inject({ url: `/api/projects/${app.projectId}/events/?distinct_id=linus@example.org`, headers: app.auth })).json().results.length === 0)
  })

  await t.test('Groups: the seeded company with its properties', async () => {
    await open(page, 'Groups', 'Groups')
    const groups = page.getByRole('table', { name: 'Groups' })
    await groups.getByText('Acme Inc').waitFor()
    await groups.getByRole('button', { name: 'acme' }).click()
    assert.match(await groups.innerText(), /"seats": 12/)
    await assertAccessible(page, 'groups')
    await screenshot(page, 'groups')
  })

  await t.test('Feature flags: the seeded flag, create one in the form and see /decide change, toggle it off', async () => {
    await open(page, 'Feature flags', 'Feature flags')
    const flags = page.getByRole('table', { name: 'Feature flags' })
    await flags.getByText(seed.flagKey).waitFor()
    assert.match(await flags.innerText(), /50% of users/)
    await assertAccessible(page, 'feature flags')
    await screenshot(page, 'feature-flags')

    const decide = async (distinctId: string) => {
      const r = await app.http.inject({ method: 'POST', url: '/decide/?v=3', payload: { api_key: app.projectKey, distinct_id: distinctId } })
      return (r.json() as { featureFlags: Record<string, unknown> }).featureFlags
    }
    assert.equal((await decide('ada@example.com'))['made-in-ui'], undefined)
    await page.getByRole('link', { name: 'New flag' }).click()
    await page.getByLabel('Key').fill('made-in-ui')
    await page.getByLabel('Description').fill('Made in the web app')
    await page.getByRole('button', { name: 'Add property filter' }).click()
    // The property picker offers the people's property names.
    await eventually(async () => (await page.locator('#person-properties option[value="email"]').count()) === 1)
    await page.getByLabel('Person property').fill('email')
    await page.getByLabel('Operator').selectOption('icontains')
    await page.getByLabel('Value', { exact: true }).fill('example.com')
    await page.getByRole('button', { name: 'Save flag' }).click()
    await page.getByRole('heading', { name: 'Flag made-in-ui' }).waitFor()
    await eventually(async () => (await decide('ada@example.com'))['made-in-ui'] === true)
    assert.equal((await decide('linus@example.org'))['made-in-ui'], false)

    const preview = page.getByRole('table', { name: 'Flag preview' })
    await preview.getByText('ada@example.com').waitFor()
    assert.match(await preview.innerText(), /ada@example\.com\s+true/)
    await assertAccessible(page, 'flag editor')
    await screenshot(page, 'feature-flag-editor')

    await open(page, 'Feature flags', 'Feature flags')
    await page.getByRole('switch', { name: 'Enable made-in-ui' }).click()
    await eventually(async () => (await decide('ada@example.com'))['made-in-ui'] === undefined || (await decide('ada@example.com'))['made-in-ui'] === false)
  })

  await t.test('Feature flags: edit into a multivariate flag with a payload', async () => {
    await page.getByRole('table', { name: 'Feature flags' }).getByRole('link', { name: seed.flagKey }).click()
    await page.getByRole('heading', { name: `Flag ${seed.flagKey}` }).waitFor()
    await page.getByLabel('Roll out to (%)').fill('100')
    for (const [i, key] of ['control', 'test'].entries()) {
      await page.getByRole('button', { name: 'Add variant' }).click()
      await page.getByLabel('Variant key').nth(i).fill(key)
      await page.getByLabel('Rollout (%)').nth(i).fill('50')
    }
    await page.getByLabel('Payload when variant is test (JSON)').fill('{"color":"blue"}')
    await page.getByRole('button', { name: 'Save flag' }).click()
    await eventually(async () => (await api.get('/feature_flags/')).json().results.find((f: { key: string }) => f.key === seed.flagKey).filters.multivariate?.variants.length === 2)
    const stored = (await api.get('/feature_flags/')).json().results.find((f: { key: string }) => f.key === seed.flagKey)
    assert.deepEqual(stored.filters.multivariate.variants.map((v: { key: string; rollout_percentage: number }) => [v.key, v.rollout_percentage]), [['control', 50], ['test', 50]])
    assert.equal(stored.filters.payloads.test, '{"color":"blue"}')
    const values = await Promise.all(['ada@example.com', 'grace@example.com', 'u1', 'u2', 'u3', 'u4'].map(async (id) => {
      const r = await app.http.inject({ method: 'POST', url: '/decide/?v=3', payload: { api_key: app.projectKey, distinct_id: id } })
      return (r.json() as { featureFlags: Record<string, unknown> }).featureFlags[seed.flagKey]
    }))
    assert.ok(values.every((v) => v === 'control' || v === 'test'), JSON.stringify(values))
    await page.getByRole('table', { name: 'Flag preview' }).getByText(/^(control|test)$/).first().waitFor()
    await open(page, 'Feature flags', 'Feature flags')
  })

  await t.test('Actions: the seeded action with its event count; create one', async () => {
    await open(page, 'Actions', 'Actions')
    const table = page.getByRole('table', { name: 'Actions' })
    const row = table.getByRole('row').filter({ hasText: seed.actionName })
    const expected = (await api.get('/actions/')).json().results.find((a: { name: string }) => a.name === seed.actionName)
    const count = (await api.get(`/actions/${expected.id}/count/`)).json().count as number
    assert.ok(count > 0)
    await eventually(async () => (await row.innerText()).includes(count.toLocaleString('en-US')))
    await page.getByRole('button', { name: 'New action' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Started checkout')
    await page.getByLabel('Event name').fill('checkout started')
    await page.getByRole('button', { name: 'Save action' }).click()
    await table.getByText('Started checkout').waitFor()
    await assertAccessible(page, 'actions')
    await screenshot(page, 'actions')
  })

  await t.test('Cohorts: the seeded cohort; create one from a condition', async () => {
    await open(page, 'Cohorts', 'Cohorts')
    const table = page.getByRole('table', { name: 'Cohorts' })
    await table.getByText(seed.cohortName).waitFor()
    // Ada, Grace (and not Linus, at example.org) have an example.com e-mail.
    await eventually(async () => /Example\.com people.*\s2$/m.test(await table.innerText()))
    await page.getByRole('button', { name: 'New cohort' }).click()
    await page.getByLabel('Name').fill('Pro plan')
    await page.getByLabel('Person property').fill('plan')
    await page.getByLabel('Value').fill('pro')
    await page.getByRole('button', { name: 'Save cohort' }).click()
    await table.getByText('Pro plan').waitFor()
    await eventually(async () => /Pro plan.*\s1$/m.test(await table.innerText()))
    const stored = (await api.get('/cohorts/')).json().results.find((c: { name: string }) => c.name === 'Pro plan')
    assert.match(JSON.stringify(stored.filters), /"key":"plan".*"value":"pro"/)
    await assertAccessible(page, 'cohorts')
    await screenshot(page, 'cohorts')
  })

  await t.test('Insights: the seeded insight; build and save a trend, add it to a dashboard', async () => {
    await open(page, 'Insights', 'Insights')
    await page.getByRole('table', { name: 'Insights' }).getByText(seed.insightName).waitFor()
    await assertAccessible(page, 'insights list')
    await page.getByRole('link', { name: 'New insight' }).click()
    await page.getByLabel('Series 1', { exact: true }).fill('checkout started')
    await page.getByLabel('Show as').selectOption('ActionsBar')
    await page.getByLabel('Name').fill('Checkouts per day')
    await page.getByRole('button', { name: 'Save insight' }).click()
    await page.getByRole('heading', { level: 1, name: 'Checkouts per day' }).waitFor()
    const saved = (await api.get('/insights/')).json().results.find((i: { name: string }) => i.name === 'Checkouts per day')
    assert.equal(saved.query.source.kind, 'TrendsQuery')
    assert.equal(saved.query.source.series[0].event, 'checkout started')
    assert.equal(saved.query.source.trendsFilter.display, 'ActionsBar')
    // Computed by the query API: 2 people x 5 days of "checkout started".
    const totals = page.getByRole('table', { name: 'Series totals' })
    await totals.waitFor()
    assert.match(await totals.innerText(), /checkout started\s+10\b/)
    await page.getByRole('img', { name: 'TrendsQuery chart' }).waitFor()

    await page.getByLabel('Add to dashboard').selectOption({ label: seed.dashboardName })
    await page.getByRole('button', { name: 'Add', exact: true }).click()
    await page.getByText('Added.').waitFor()
    const onDashboard = (await api.get(`/dashboards/${seed.dashboardId}/`)).json().tiles.map((tile: { insight: { name: string } | null }) => tile.insight?.name)
    assert.ok(onDashboard.includes('Checkouts per day'), JSON.stringify(onDashboard))
    await assertAccessible(page, 'insight editor')
    await screenshot(page, 'insight-trend')
  })

  await t.test('Insights: an action trend, stickiness, lifecycle and SQL from the query API', async () => {
    await open(page, 'Insights', 'Insights')
    await page.getByRole('link', { name: 'New insight' }).click()
    // A trend of a saved action: the pricing pageviews of the 2 people left (3 days each).
    await page.getByLabel('Type of series 1').selectOption({ label: `Action: ${seed.actionName}` })
    await page.getByRole('button', { name: 'Run' }).click()
    await eventually(async () => /Viewed pricing\s+6\b/.test(await page.getByRole('table', { name: 'Series totals' }).innerText().catch(() => '')))
    // Broken down by browser: Ada (Chrome) and Grace (Firefox) checked out on 5 days each.
    await page.getByLabel('Type of series 1').selectOption('event')
    await page.getByLabel('Series 1', { exact: true }).fill('checkout started')
    await page.getByLabel('Breakdown by event property').fill('$browser')
    await page.getByRole('button', { name: 'Run' }).click()
    await eventually(async () => {
      const text = await page.getByRole('table', { name: 'Series totals' }).innerText().catch(() => '')
      return /Chrome\s+5\b/.test(text) && /Firefox\s+5\b/.test(text)
    })
    await screenshot(page, 'insight-breakdown')
    await page.getByLabel('Breakdown by event property').fill('')
    // Compared with the previous 7 days: 10 checkouts now, none before.
    await page.getByLabel('Compare to previous period').check()
    await page.getByRole('button', { name: 'Run' }).click()
    await eventually(async () => {
      const text = await page.getByRole('table', { name: 'Series totals' }).innerText().catch(() => '')
      return /current\s+10\b/.test(text) && /previous\s+0\b/.test(text)
    })
    await page.getByLabel('Compare to previous period').uncheck()
    for (const [tab, kind] of [['Stickiness', 'StickinessQuery'], ['Lifecycle', 'LifecycleQuery']]) {
      await page.getByRole('tab', { name: tab }).click()
      await page.getByRole('button', { name: 'Run' }).click()
      await page.getByRole('img', { name: `${kind} chart` }).waitFor()
      assert.equal(await page.getByRole('alert').count(), 0, `${tab}: no error`)
    }
    // Lifecycle's series are PostHog's statuses; the seeded people are new in the range.
    assert.match(await page.getByRole('table', { name: 'Series totals' }).innerText(), /new\s+\d/)
    await assertAccessible(page, 'lifecycle')
    await screenshot(page, 'insight-lifecycle')

    // The SQL editor's example query, run by the HogQL engine: events by name.
    await page.getByRole('tab', { name: 'SQL' }).click()
    await page.getByRole('button', { name: 'Run' }).click()
    const rows = page.getByRole('table', { name: 'Query results' })
    await rows.waitFor()
    assert.match(await rows.innerText(), /event\s+events/)
    assert.match(await rows.innerText(), /\$pageview\s+16\b/, '2 people x 8 pageviews (Linus was deleted with his events)')
    await assertAccessible(page, 'sql')
    await screenshot(page, 'insight-sql')
  })

  await t.test('Dashboards: tiles and text card, date-range override, move a tile', async () => {
    await open(page, 'Dashboards', 'Dashboards')
    await page.getByRole('table', { name: 'Dashboards' }).getByRole('link', { name: seed.dashboardName }).click()
    await page.getByRole('heading', { level: 1, name: seed.dashboardName }).waitFor()
    await page.getByRole('link', { name: seed.insightName }).waitFor()
    await page.getByRole('link', { name: 'Checkouts per day' }).waitFor()
    await page.getByText('Weekly review: pageviews and checkouts.').waitFor()
    await eventually(async () => (await page.getByRole('img', { name: 'TrendsQuery chart' }).count()) === 2)
    await page.getByLabel('Date range').selectOption('-30d')
    await eventually(async () => (await api.get(`/dashboards/${seed.dashboardId}/`)).json().filters.date_from === '-30d')
    await assertAccessible(page, 'dashboard')
    await screenshot(page, 'dashboard')

    const note = page.locator('.card').filter({ hasText: 'Weekly review' })
    await note.getByLabel('Move tile to dashboard').selectOption({ label: 'Marketing' })
    await eventually(async () => (await api.get(`/dashboards/${seed.otherDashboardId}/`)).json().tiles.some((x: { text: { body: string } | null }) => x.text?.body.startsWith('Weekly review')))

    await open(page, 'Dashboards', 'Dashboards')
    await page.getByLabel('Name').fill('Product overview')
    await page.getByLabel('Start from').selectOption({ label: 'Template: Product analytics' })
    await page.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('heading', { level: 1, name: 'Product overview' }).waitFor()
    await page.getByRole('link', { name: 'Daily active users' }).waitFor()
    // 2 people x (5 home pages + 3 pricing pages) in the last 30 days, as one number (Linus was deleted with his events).
    assert.equal(await page.getByTestId('bold-number').innerText(), '16')
    await screenshot(page, 'dashboard-from-template')

    // Refresh recomputes the tiles: one more pageview shows up in the number.
    const res = await app.http.inject({ method: 'POST', url: '/capture/', payload: { api_key: app.projectKey, event: '$pageview', properties: { distinct_id: 'ada@example.com' } } })
    assert.equal(res.statusCode, 200)
    await eventually(async () => (await app.http.inject({ url: `/api/projects/${app.projectId}/events/?event=$pageview&limit=100`, headers: app.auth })).json().results.length === 17)
    await page.getByRole('button', { name: 'Refresh' }).click()
    await eventually(async () => (await page.getByTestId('bold-number').innerText()) === '17')
  })

  await t.test('Settings: project key and snippets, ingestion status and dead letters', async () => {
    await open(page, 'Settings', 'Settings')
    assert.equal(await page.getByTestId('project-api-key').innerText(), app.projectKey)
    // PostHog's HTML snippet comes first, the npm form beside it.
    const html = await page.getByLabel('HTML snippet').innerText()
    assert.match(html, /\/static\/array\.js/)
    assert.ok(html.includes(`posthog.init('${app.projectKey}', { api_host: '${url}'`), html)
    await page.getByRole('tab', { name: 'posthog-js (npm)' }).click()
    assert.match(await page.getByLabel('posthog-js (npm) snippet').innerText(), new RegExp(`posthog.init\\('${app.projectKey}', \\{ api_host: '${url}' \\}\\)`))
    await page.getByRole('tab', { name: 'posthog-python' }).click()
    assert.match(await page.getByLabel('posthog-python snippet').innerText(), /Posthog\('phc_/)
    await assertAccessible(page, 'settings')
    await screenshot(page, 'settings')
    await page.getByLabel('Project time zone').selectOption('Europe/Berlin')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText('Saved.').waitFor()
    assert.equal((await app.http.inject({ url: `/api/projects/${app.projectId}/`, headers: app.auth })).json().timezone, 'Europe/Berlin')
    await page.getByRole('tab', { name: 'Ingestion' }).click()
    await page.getByText('ready', { exact: true }).waitFor()
    await page.getByText('No dead letters.').waitFor()
    assert.match(await page.locator('.card').first().innerText(), /Events processed since start\s+\d+/)
    await assertAccessible(page, 'ingestion settings')
    await screenshot(page, 'settings-ingestion')
  })
})

test('web app: usable at a phone width, and the first load stays under 300 KB compressed', async (t) => {
  const { app, url, seed } = await startWebTally(t)
  const browser = await launchBrowser(t)
  const page = await newPage(browser, PHONE)
  let bytes = 0
  const files: string[] = []
  page.on('response', async (r) => {
    if (!/\.(js|css)$/.test(new URL(r.url()).pathname)) return
    const sizes = await r.request().sizes()
    bytes += sizes.responseBodySize
    files.push(`${new URL(r.url()).pathname} ${sizes.responseBodySize} B (${r.headers()['content-encoding'] ?? 'identity'})`)
  })
  await signInWithKey(page, url, app.personalKey)
  // The seed has page views: the first page is Web analytics, with its chart (ECharts' chunk).
  await page.getByRole('heading', { level: 1, name: 'Web analytics' }).waitFor()
  await page.getByRole('img', { name: 'Visitors and views over time' }).waitFor()
  console.log(`first load (sign-in + Web analytics): ${(bytes / 1024).toFixed(1)} KB compressed JS+CSS in ${files.length} files\n  ${files.join('\n  ')}`)
  assert.ok(bytes > 10_000, 'the measure saw the bundle')
  assert.ok(bytes < 300 * 1024, `first load ${bytes} B must stay under 300 KB`)
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= PHONE.width, 'web analytics fits')
  await screenshot(page, 'web-analytics-seed-phone')

  const nav = page.getByRole('navigation', { name: 'Main' })
  assert.equal(await nav.isVisible(), false, 'the navigation folds away on a phone')
  await page.getByRole('button', { name: 'Menu' }).click()
  await nav.getByRole('link', { name: 'Activity' }).click()
  await page.getByRole('table', { name: 'Events' }).getByText('checkout started').first().waitFor()
  const width = await page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(width <= PHONE.width, `no sideways scrolling at 390 px (page is ${width} px wide)`)
  await assertAccessible(page, 'activity (phone)')
  await screenshot(page, 'activity-phone')
  await page.getByRole('button', { name: 'Menu' }).click()
  await nav.getByRole('link', { name: 'Feature flags' }).click()
  await page.getByRole('table', { name: 'Feature flags' }).getByText(seed.flagKey).waitFor()
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= PHONE.width)
  await screenshot(page, 'feature-flags-phone')

  // Every section fits the phone's width (wide tables scroll inside their card, not the page).
  for (const [link, heading] of [['People', 'People'], ['Groups', 'Groups'], ['Insights', 'Insights'], ['Dashboards', 'Dashboards'], ['Actions', 'Actions'], ['Cohorts', 'Cohorts'], ['Settings', 'Settings']]) {
    await page.getByRole('button', { name: 'Menu' }).click()
    await nav.getByRole('link', { name: link, exact: true }).click()
    await page.getByRole('heading', { level: 1, name: heading }).waitFor()
    await page.locator('.card').first().waitFor()
    const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(pageWidth <= PHONE.width, `${link}: ${pageWidth} px wide at ${PHONE.width}`)
    await assertAccessible(page, `${link} (phone)`)
  }
  await page.goto(`${url}/insights/${seed.insightId}`)
  await page.getByRole('img', { name: 'TrendsQuery chart' }).waitFor()
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= PHONE.width, 'insight editor fits')
  await screenshot(page, 'insight-phone')
  await page.goto(`${url}/dashboards/${seed.dashboardId}`)
  await page.getByRole('img', { name: 'TrendsQuery chart' }).first().waitFor()
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= PHONE.width, 'dashboard fits')
  await assertAccessible(page, 'dashboard (phone)')
  await screenshot(page, 'dashboard-phone')
})
