import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { CHROMIUM, hasChromium, launchBrowser } from '../helpers/browser.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { axeViolations, SCREENSHOTS, signInWithKey, startWebTally } from '../helpers/web-app.ts'

// Not a skip: the web app's tests must fail where Chromium is missing.
assert.ok(hasChromium, `Chromium is needed at ${CHROMIUM} (apt-get install chromium)`)

const MIN = 60_000
const SITE = 'https://shop.test'
// Four persons' page views an hour ago: the paths the page must show (product ids cleaned to :id).
const WALKS: Array<[string, string, string[]]> = [
  ['ada@example.com', 'Ada Lovelace', ['/', '/pricing', '/signup']],
  ['grace@example.com', 'Grace Hopper', ['/', '/pricing', '/product/17']],
  ['linus@example.org', 'Linus Torvalds', ['/', '/product/42']],
  ['margaret@example.com', 'Margaret Hamilton', ['/', '/pricing', '/signup']],
]
// [from, to, times, persons] in PostHog's order: most taken first, then by source and target.
const EDGES: Array<[string, string, number, string[]]> = [
  ['/', '/pricing', 3, ['ada@example.com', 'grace@example.com', 'margaret@example.com']],
  ['/pricing', '/signup', 2, ['ada@example.com', 'margaret@example.com']],
  ['/', '/product/:id', 1, ['linus@example.org']],
  ['/pricing', '/product/:id', 1, ['grace@example.com']],
]

async function newPage(browser: Browser, viewport: { width: number; height: number }): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage()
  page.setDefaultTimeout(60_000) // the machine is shared: generous waits, never a timing assertion
  page.on('pageerror', (err) => console.error('page error:', err.message))
  return page
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true })
}

/** A paths insight of page views with a cleaning rule for product ids, run in the builder. */
async function runPaths(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/insights/new`)
  await page.getByRole('tab', { name: 'Paths' }).click()
  await page.getByLabel('Steps', { exact: true }).fill('4')
  await page.getByRole('button', { name: 'Add cleaning rule' }).click()
  await page.getByLabel('Regex (rule 1)').fill('/product/\\d+')
  await page.getByLabel('Replace with (rule 1)').fill('/product/:id')
  await page.getByRole('button', { name: 'Run' }).click()
  await page.getByRole('table', { name: 'Paths' }).waitFor()
}

/** The persons the open modal lists (the name shown). */
async function listed(dialog: Locator): Promise<string[]> {
  const table = dialog.getByRole('table', { name: 'Persons' })
  await table.waitFor()
  return (await table.locator('tbody tr a:first-child').allInnerTexts()).sort()
}

test('paths in the insight builder: a Sankey and a table of the steps, a link or a row lists its persons; accessible, and at phone width', { timeout: 600_000 }, async (t) => {
  const { app, url } = await startWebTally(t, { seed: false, env: { TALLY_LOG_LEVEL: 'silent' } })
  const start = Date.now() - 60 * MIN
  const batch = WALKS.flatMap(([id, name, pages], p) => pages.map((page, i) => ({
    event: '$pageview', timestamp: new Date(start + p * 10 * MIN + i * MIN).toISOString(),
    properties: { distinct_id: id, $current_url: `${SITE}${page}`, ...(i === 0 ? { $set: { email: id, name } } : {}) },
  })))
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
  await waitForEvents(app, batch.length)

  const browser = await launchBrowser(t)
  const page = await newPage(browser, { width: 1280, height: 900 })
  await signInWithKey(page, url, app.personalKey)
  await runPaths(page, url)
  const table = page.getByRole('table', { name: 'Paths' })
  const shown = () => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1, 5).map((td) => td.textContent ?? '')))
  const rows = await shown()
  // One origin: the table shows the paths (PostHog strips the home page's trailing slash: "/" is the origin alone).
  await page.getByText(`Pages of ${SITE}`).waitFor()
  assert.deepEqual(rows, EDGES.map(([from, to, n]) => [from, to, String(n), '1m']), 'the table shows PostHog\'s edges')
  const chart = page.getByRole('img', { name: 'Paths chart' })
  await chart.waitFor()
  assert.deepEqual(await axeViolations(page), [], 'paths result: axe-core found serious or critical violations')
  await screenshot(page, 'insight-paths')

  // A click on the chart's links, just right of the first column of nodes, top to bottom, until one opens its persons.
  const dialog = page.getByRole('dialog')
  await chart.scrollIntoViewIfNeeded()
  const box = (await chart.boundingBox())!
  let opened = false
  for (let y = box.y + 10; y < box.y + box.height - 10 && !opened; y += 6) {
    await page.mouse.click(box.x + 40, y)
    opened = await dialog.isVisible()
  }
  assert.ok(opened, 'a link of the chart opens the persons behind it')
  const title = await dialog.getByRole('heading').innerText()
  const edge = EDGES.find(([from, to]) => title.startsWith(`${`${SITE}${from}`.replace(/\/$/, '')} → ${SITE}${to} (step 1 to 2)`))
  assert.ok(edge, `the modal names a first-step edge: ${title}`)
  assert.deepEqual(await listed(dialog), edge[3])
  assert.deepEqual(await axeViolations(page), [], 'persons of a path link: axe-core found serious or critical violations')
  await screenshot(page, 'insight-paths-persons')
  await page.keyboard.press('Escape')
  await dialog.waitFor({ state: 'detached' })

  // The table's buttons open the same lists from the keyboard: step 2 -> 3, and a cleaned URL.
  await page.getByRole('button', { name: `Persons from ${SITE}/pricing to ${SITE}/product/:id, step 2` }).click()
  assert.deepEqual(await listed(dialog), ['grace@example.com'])
  await page.keyboard.press('Escape')
  await dialog.waitFor({ state: 'detached' })

  // PostHog's advanced options: the most links shown (edgeLimit), the least and most times a link is taken.
  const rerun = async (label: string, value: string, expected: typeof EDGES) => {
    await page.getByLabel(label, { exact: true }).fill(value)
    await page.getByRole('button', { name: 'Run' }).click()
    const want = expected.map(([from, to, n]) => [from, to, String(n), '1m'])
    await eventually(async () => JSON.stringify(await shown()) === JSON.stringify(want), 600).catch(async () => {
      assert.deepEqual(await shown(), want, `${label} ${value}`)
    })
  }
  await rerun('Maximum number of paths', '3', EDGES.slice(0, 3))
  await rerun('Maximum number of paths', '', EDGES)
  await rerun('Minimum path weight', '2', EDGES.filter(([, , n]) => n >= 2))
  await rerun('Minimum path weight', '', EDGES)
  // Links taken once: '/pricing' → '/product/:id' goes too, its '/pricing' no longer reached from the first step (PostHog's validate_results).
  await rerun('Maximum path weight', '1', EDGES.filter(([from, , n]) => n <= 1 && from === '/'))
  await page.getByLabel('Maximum path weight', { exact: true }).fill('')

  const phone = await newPage(browser, { width: 390, height: 844 })
  await signInWithKey(phone, url, app.personalKey)
  await runPaths(phone, url)
  await phone.getByRole('img', { name: 'Paths chart' }).waitFor()
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
  assert.ok(overflow <= 0, `the page fits a phone's width (overflows by ${overflow}px)`)
  assert.deepEqual(await axeViolations(phone), [], 'paths at phone width: axe-core found serious or critical violations')
  await screenshot(phone, 'insight-paths-phone')
})
