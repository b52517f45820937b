import { mkdirSync } from 'node:fs'
import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { CHROMIUM, hasChromium, launchBrowser } from '../helpers/browser.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { privateApi } from '../helpers/private-api.ts'
import { axeViolations, fillFunnelSteps, SCREENSHOTS, signInWithKey, startWebTally } from '../helpers/web-app.ts'

// Not a skip: the web app's tests must fail where Chromium is missing.
assert.ok(hasChromium, `Chromium is needed at ${CHROMIUM} (apt-get install chromium)`)

const DESKTOP = { width: 1280, height: 800 }
const PHONE = { width: 390, height: 844 }
const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR
// The colours the charts draw with (web/src/charts/echart.tsx PALETTE[0], funnel-result.tsx DROPPED).
const BLUE: Rgb = [0x1d, 0x4a, 0xff]
const GREY: Rgb = [0xd7, 0xdb, 0xe6]
const LIFECYCLE_NEW: Rgb = [0x2e, 0x7d, 0x32]
type Rgb = [number, number, number]

const NAMED = [
  { id: 'ada@example.com', name: 'Ada Lovelace' },
  { id: 'grace@example.com', name: 'Grace Hopper' },
  { id: 'linus@example.org', name: 'Linus Torvalds' },
  { id: 'margaret@example.com', name: 'Margaret Hamilton' },
]
const TRIALS = Array.from({ length: 100 }, (_, i) => `trial-${String(i).padStart(3, '0')}`)

/**
 * Funnel "signed up" -> "created project" -> "invited teammate", two days ago: Ada does all three,
 * Grace and Linus the first two, Margaret only signs up (4, 3, 1). "opened app" at noon (UTC): Ada on
 * day -3 and twice on day -1, Grace on day -1, Linus and the 100 trial users (no properties: shown by
 * their distinct id) on day -2.
 */
function fixture(now: number, today: number) {
  const t0 = now - 2 * DAY
  const steps: [string, string[]][] = [[NAMED[0].id, ['signed up', 'created project', 'invited teammate']], [NAMED[1].id, ['signed up', 'created project']],
    [NAMED[2].id, ['signed up', 'created project']], [NAMED[3].id, ['signed up']]]
  const at = (t: number) => new Date(t).toISOString()
  const funnel = steps.flatMap(([id, events]) => events.map((event, i) => ({
    event, timestamp: at(t0 + i * 10 * MIN), properties: { distinct_id: id, ...(i === 0 ? { $set: { email: id, name: NAMED.find((p) => p.id === id)!.name } } : {}) },
  })))
  const noon = (ago: number, n = 0) => at(today - ago * DAY + 12 * HOUR + n * MIN)
  const opened = [[NAMED[0].id, noon(3)], [NAMED[0].id, noon(1)], [NAMED[0].id, noon(1, 5)], [NAMED[1].id, noon(1)], [NAMED[2].id, noon(2)], ...TRIALS.map((id, i) => [id, noon(2, i % 30)])]
    .map(([id, timestamp]) => ({ event: 'opened app', timestamp, properties: { distinct_id: id } }))
  return [...funnel, ...opened]
}

async function newPage(browser: Browser, viewport = DESKTOP): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage()
  // The machine is shared: generous waits, never a timing assertion.
  page.setDefaultTimeout(60_000)
  page.on('pageerror', (err) => console.error('page error:', err.message))
  return page
}

interface Run { left: number; right: number; top: number; bottom: number }

/**
 * Where a chart drew `rgb`: runs of adjacent pixel columns holding that colour (left to right, in page
 * coordinates), above the legend's row. The chart is a canvas, so a bar or a line is found by its colour.
 */
async function colourRuns(page: Page, chart: Locator, rgb: Rgb): Promise<Run[]> {
  await chart.scrollIntoViewIfNeeded() // mouse clicks land in the viewport
  await page.mouse.move(0, 0) // no tooltip or axis pointer over the bars
  const box = (await chart.boundingBox())!
  const runs = await chart.evaluate((el, rgb) => {
    const canvas = el.querySelector('canvas')!
    const ratio = canvas.width / el.clientWidth
    const { width, height } = canvas
    const data = canvas.getContext('2d')!.getImageData(0, 0, width, height).data
    const above = height - Math.round(40 * ratio)
    const out: { left: number; right: number; top: number; bottom: number }[] = []
    for (let x = 0; x < width; x++) {
      let top = -1
      let bottom = -1
      for (let y = 0; y < above; y++) {
        const i = (y * width + x) * 4
        if (Math.abs(data[i] - rgb[0]) <= 2 && Math.abs(data[i + 1] - rgb[1]) <= 2 && Math.abs(data[i + 2] - rgb[2]) <= 2) {
          if (top < 0) top = y
          bottom = y
        }
      }
      if (top < 0) continue
      const last = out[out.length - 1]
      if (last && x - last.right <= 3) Object.assign(last, { right: x, top: Math.min(last.top, top), bottom: Math.max(last.bottom, bottom) })
      else out.push({ left: x, right: x, top, bottom })
    }
    return out.map((r) => ({ left: r.left / ratio, right: r.right / ratio, top: r.top / ratio, bottom: r.bottom / ratio }))
  }, rgb)
  return runs.map((r) => ({ left: box.x + r.left, right: box.x + r.right, top: box.y + r.top, bottom: box.y + r.bottom }))
}

async function clickRun(page: Page, run: Run): Promise<void> {
  await page.mouse.click((run.left + run.right) / 2, (run.top + run.bottom) / 2)
}

/** The open modal's persons: [name shown, the line under it] per row. */
async function listed(dialog: Locator): Promise<string[][]> {
  const table = dialog.getByRole('table', { name: 'Persons' })
  await table.waitFor()
  return table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [r.querySelector('a')?.textContent ?? '', r.querySelector('.muted')?.textContent ?? '', r.querySelector('td.num')?.textContent ?? '']))
}

/** The viewport into SCREENSHOTS/<name>.png: a modal's backdrop covers the viewport, not the whole page. */
async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) })
}

async function assertAccessible(page: Page, what: string): Promise<void> {
  assert.deepEqual(await axeViolations(page), [], `${what}: axe-core found serious or critical violations`)
}

/** A trends line of "opened app" over the last 7 days, run in the builder; its chart. */
async function openedAppTrend(page: Page, url: string): Promise<Locator> {
  await page.goto(`${url}/insights/new`)
  await page.getByLabel('Series 1', { exact: true }).fill('opened app')
  await page.getByRole('button', { name: 'Run' }).click()
  const chart = page.getByRole('img', { name: 'TrendsQuery chart' })
  await chart.waitFor()
  await eventually(async () => (await colourRuns(page, chart, BLUE)).length > 0, 600)
  return chart
}

/** Clicks the point of day `index` (of `count`) on a one-series line chart: the line runs from the first point's column to the last's. */
async function clickDay(page: Page, chart: Locator, index: number, count: number): Promise<void> {
  const [line] = await colourRuns(page, chart, BLUE)
  const x = line.left + ((line.right - line.left) * index) / (count - 1)
  await page.mouse.click(x, (line.top + line.bottom) / 2)
}

test('web persons modal: the persons behind a funnel step and a trends point, pages of 100, search, a link to each person', async (t) => {
  const { app, url } = await startWebTally(t, { seed: false })
  const now = Date.now()
  const today = Math.floor(now / DAY) * DAY
  const batch = fixture(now, today)
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
  await waitForEvents(app, batch.length)
  const api = privateApi(app)
  const trend = (await api.post('/query/', { query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'opened app' }], interval: 'day', dateRange: { date_from: '-7d' } } })).json()
  const days: string[] = trend.results[0].days
  const dayIndex = (ago: number) => days.indexOf(new Date(today - ago * DAY).toISOString().slice(0, 10))
  assert.ok(dayIndex(1) > 0 && dayIndex(2) > 0, JSON.stringify(days))

  const browser = await launchBrowser(t)
  const page = await newPage(browser)
  await signInWithKey(page, url, app.personalKey)
  const dialog = page.getByRole('dialog')

  await t.test('funnel: a step\'s bar lists who reached it, its grey part who dropped off before it', async () => {
    await page.goto(`${url}/insights/new`)
    await page.getByRole('tab', { name: 'Funnels' }).click()
    await fillFunnelSteps(page, ['signed up', 'created project', 'invited teammate'])
    await page.getByRole('button', { name: 'Run' }).click()
    const chart = page.getByRole('img', { name: 'Funnel chart' })
    await chart.waitFor()
    let blue: Run[] = []
    await eventually(async () => (blue = await colourRuns(page, chart, BLUE)).length === 3, 600)

    await clickRun(page, blue[1])
    await dialog.waitFor()
    assert.equal(await dialog.getByRole('heading').innerText(), 'Reached step 2: created project')
    await dialog.getByText('3 persons', { exact: true }).waitFor()
    assert.deepEqual(await listed(dialog), [
      ['ada@example.com', 'Ada Lovelace', ''], ['grace@example.com', 'Grace Hopper', ''], ['linus@example.org', 'Linus Torvalds', ''],
    ])
    assert.equal(await dialog.getByRole('button', { name: 'Load more' }).count(), 0, 'one page holds them all')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })

    const grey = await colourRuns(page, chart, GREY)
    assert.equal(grey.length, 2, 'drop-off before steps 2 and 3')
    await clickRun(page, grey[1])
    await dialog.getByRole('heading', { name: 'Dropped off before step 3: invited teammate' }).waitFor()
    assert.deepEqual((await listed(dialog)).map((r) => r[0]), ['grace@example.com', 'linus@example.org'])
    await assertAccessible(page, 'persons modal (funnel)')
    await screenshot(page, 'insight-persons-funnel')
    await dialog.getByRole('button', { name: 'Close' }).click()
    await dialog.waitFor({ state: 'detached' })

    // The table's counts open the same lists from the keyboard.
    await page.getByRole('button', { name: /^1 \(25\.0%\): persons who dropped off before step 2/ }).click()
    assert.deepEqual((await listed(dialog)).map((r) => r[0]), ['margaret@example.com'])
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
  })

  await t.test('trends: a point lists the persons with events that day, the busiest first', async () => {
    const chart = await openedAppTrend(page, url)
    await clickDay(page, chart, dayIndex(1), days.length)
    await dialog.waitFor()
    assert.match(await dialog.getByRole('heading').innerText(), /^opened app · /)
    assert.deepEqual(await listed(dialog), [['ada@example.com', 'Ada Lovelace', '2'], ['grace@example.com', 'Grace Hopper', '1']])
    // Focus stays in the dialog, and the page behind it is inert.
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press('Tab')
      assert.equal(await page.evaluate(() => document.activeElement?.closest('dialog') !== null), true, `focus inside the dialog after ${i + 1} Tab(s)`)
    }
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
  })

  await t.test('more than a page: "Load more" reads the rest; the search narrows the list', async () => {
    const chart = page.getByRole('img', { name: 'TrendsQuery chart' })
    await clickDay(page, chart, dayIndex(2), days.length)
    await dialog.waitFor()
    await eventually(async () => (await listed(dialog)).length === 100, 600)
    const more = dialog.getByRole('button', { name: 'Load more' })
    await more.waitFor()
    await assertAccessible(page, 'persons modal (trend, a page of 100)')
    await screenshot(page, 'insight-persons-trend')
    await more.click()
    await eventually(async () => (await listed(dialog)).length === 101, 600)
    assert.equal(await more.count(), 0, 'no more pages')
    const rows = await listed(dialog)
    assert.deepEqual(rows.map((r) => r[0]).sort(), [...TRIALS, 'linus@example.org'].sort())
    assert.deepEqual(rows.find((r) => r[0] === 'trial-007'), ['trial-007', '', '1'], 'a person without properties is shown by their distinct id')
    await dialog.getByLabel('Search persons').fill('LINUS')
    await eventually(async () => (await listed(dialog)).length === 1, 600)
    assert.deepEqual((await listed(dialog))[0], ['linus@example.org', 'Linus Torvalds', '1'])
    // Escape in the search field clears it first (the browser's own behaviour); the close button closes.
    await dialog.getByRole('button', { name: 'Close' }).click()
    await dialog.waitFor({ state: 'detached' })
  })

  await t.test('stickiness and lifecycle: a bar lists its persons', async () => {
    await page.goto(`${url}/insights/new`)
    await page.getByRole('tab', { name: 'Stickiness' }).click()
    await page.getByLabel('Series 1', { exact: true }).fill('signed up')
    await page.getByRole('button', { name: 'Run' }).click()
    const sticky = page.getByRole('img', { name: 'StickinessQuery chart' })
    await sticky.waitFor()
    let bars: Run[] = []
    await eventually(async () => (bars = await colourRuns(page, sticky, BLUE)).length === 1, 600)
    await clickRun(page, bars[0])
    await dialog.getByRole('heading', { name: 'signed up · active on 1 day' }).waitFor()
    assert.deepEqual((await listed(dialog)).map((r) => r[0]), NAMED.map((p) => p.id))
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })

    await page.getByRole('tab', { name: 'Lifecycle' }).click()
    await page.getByLabel('Series', { exact: true }).fill('created project')
    await page.getByRole('button', { name: 'Run' }).click()
    const lifecycle = page.getByRole('img', { name: 'LifecycleQuery chart' })
    await lifecycle.waitFor()
    await eventually(async () => (bars = await colourRuns(page, lifecycle, LIFECYCLE_NEW)).length === 1, 600)
    await clickRun(page, bars[0])
    await dialog.getByRole('heading', { name: /^new · / }).waitFor()
    // Ada, Grace and Linus created a project that day; Ada's person was first seen the day before (PostHog's "new" is the person's first day).
    assert.deepEqual((await listed(dialog)).map((r) => r[0]), ['grace@example.com', 'linus@example.org'])
    await assertAccessible(page, 'persons modal (lifecycle)')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
  })

  await t.test('a person\'s name links to their page', async () => {
    const chart = await openedAppTrend(page, url)
    await clickDay(page, chart, dayIndex(1), days.length)
    await dialog.getByRole('link', { name: 'ada@example.com' }).click()
    await page.getByRole('heading', { level: 1, name: 'ada@example.com' }).waitFor()
    const ada = (await api.get('/persons/?distinct_id=ada@example.com')).json().results[0]
    assert.equal(new URL(page.url()).pathname, `/persons/${ada.uuid}`)
    assert.equal(await dialog.count(), 0, 'the modal is gone with the insight')
  })

  await t.test('fits a phone', async () => {
    const phone = await newPage(browser, PHONE)
    await signInWithKey(phone, url, app.personalKey)
    const chart = await openedAppTrend(phone, url)
    await clickDay(phone, chart, dayIndex(1), days.length)
    const modal = phone.getByRole('dialog')
    await modal.getByRole('link', { name: 'grace@example.com' }).waitFor()
    const box = (await modal.boundingBox())!
    assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, `the modal spans ${box.x}..${box.x + box.width}`)
    await assertAccessible(phone, 'persons modal (phone)')
    await screenshot(phone, 'insight-persons-phone')
  })
})
