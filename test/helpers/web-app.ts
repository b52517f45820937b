import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import type { TestContext } from 'node:test'
import type { Page } from 'playwright-core'
import { buildTestApp, type TestApp } from './test-app.ts'
import { privateApi } from './private-api.ts'
import { waitForEvents } from './capture-helpers.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
/**
 * Where the browser tests put their screenshots: a temp folder, so a test run never rewrites the tracked
 * ones in docs/screenshots; `SCREENSHOTS_DIR=docs/screenshots` refreshes those on purpose.
 */
export const SCREENSHOTS = path.resolve(process.env.SCREENSHOTS_DIR ?? path.join(os.tmpdir(), 'tally-screenshots'))

/** Builds the web app into dist/web when it is missing or older than web/; throws (fails the test) when that fails. */
export function ensureWebAppBuilt(): void {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-web.mjs'), '--if-stale', '--quiet'], { cwd: ROOT, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`building the web app failed:\n${r.stdout}\n${r.stderr}`)
  assert.ok(existsSync(path.join(ROOT, 'dist/web/index.html')), 'dist/web/index.html after the build')
}

const DAY = 86_400_000
const PEOPLE = [
  { id: 'ada@example.com', props: { email: 'ada@example.com', name: 'Ada Lovelace', plan: 'pro' } },
  { id: 'grace@example.com', props: { email: 'grace@example.com', name: 'Grace Hopper', plan: 'free' } },
  { id: 'linus@example.org', props: { email: 'linus@example.org', name: 'Linus T', plan: 'free' } },
]

/** Seeded data the pages are expected to show. */
export interface Seed {
  events: number
  flagKey: string
  actionName: string
  cohortName: string
  insightName: string
  insightId: number
  dashboardName: string
  dashboardId: number
  otherDashboardId: number
}

/** Events over the last 5 days from 3 people (with `$set`), a flag, an action, a cohort, an insight on a dashboard. */
export async function seedTally(app: TestApp): Promise<Seed> {
  const batch: object[] = []
  PEOPLE.forEach((p, i) => {
    for (let d = 0; d < 5; d++) {
      const at = (name: string, url: string, extra: Record<string, unknown> = {}) => batch.push({
        event: name, timestamp: new Date(Date.now() - d * DAY - i * 60_000).toISOString(),
        properties: { distinct_id: p.id, $current_url: url, $browser: i % 2 ? 'Firefox' : 'Chrome', $lib: 'web', ...(d === 0 ? { $set: p.props } : {}), ...extra },
      })
      at('$pageview', 'https://shop.example.com/')
      if (d % 2 === 0) at('$pageview', 'https://shop.example.com/pricing')
      if (i < 2) at('checkout started', 'https://shop.example.com/checkout', { amount: 40 + i })
    }
  })
  // Enough events for more than one page of Activity (50).
  for (let n = 0; n < 20; n++) batch.push({ event: 'search performed', timestamp: new Date(Date.now() - n * 3_600_000).toISOString(), properties: { distinct_id: PEOPLE[1].id, query: `q${n}` } })
  // Ada's earlier anonymous browser id, merged into her person by $identify.
  batch.push({ event: '$identify', properties: { distinct_id: PEOPLE[0].id, $anon_distinct_id: 'anon-device-ada' } })
  batch.push({ event: '$groupidentify', properties: { distinct_id: PEOPLE[0].id, $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme Inc', seats: 12 } } })
  batch.push({ event: 'invoice paid', properties: { distinct_id: PEOPLE[0].id, $groups: { company: 'acme' }, amount: 120 } })
  batch.push({ event: '$autocapture', properties: { distinct_id: PEOPLE[0].id, $event_type: 'click', $elements_chain: 'button.btn.primary:text="Buy now"nth-child="1";div.cart' } })
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
  await waitForEvents(app, batch.length)

  const api = privateApi(app)
  const created = async (r: Promise<{ statusCode: number; body: string; json: () => unknown }>) => {
    const res = await r
    assert.ok(res.statusCode < 300, res.body)
    return res.json() as { id: number }
  }
  await created(api.post('/feature_flags/', { key: 'beta-checkout', name: 'New checkout for half of users', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } }))
  await created(api.post('/actions/', { name: 'Viewed pricing', steps: [{ event: '$pageview', url: '/pricing', url_matching: 'contains' }] }))
  await created(api.post('/cohorts/', { name: 'Example.com people', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ type: 'person', key: 'email', operator: 'icontains', value: 'example.com' }] }] } } }))
  const dashboard = await created(api.post('/dashboards/', { name: 'Growth' }))
  const other = await created(api.post('/dashboards/', { name: 'Marketing' }))
  const insight = await created(api.post('/insights/', {
    name: 'Daily pageviews',
    query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }], interval: 'day', dateRange: { date_from: '-7d' }, trendsFilter: { display: 'ActionsLineGraph' } } },
    dashboards: [dashboard.id],
  }))
  await created(api.patch(`/dashboards/${dashboard.id}/`, { tiles: [{ text: { body: 'Weekly review: pageviews and checkouts.' } }] }))
  return {
    events: batch.length, flagKey: 'beta-checkout', actionName: 'Viewed pricing', cohortName: 'Example.com people',
    insightName: 'Daily pageviews', insightId: insight.id, dashboardName: 'Growth', dashboardId: dashboard.id, otherDashboardId: other.id,
  }
}

/** A seeded Tally listening on a loopback port, with the web app built (`seed: false` for an empty one). */
export async function startWebTally(t: TestContext, opts: Parameters<typeof buildTestApp>[1] & { seed?: boolean } = {}): Promise<{ app: TestApp; url: string; seed: Seed }> {
  ensureWebAppBuilt()
  const app = await buildTestApp(t, opts)
  const seed = opts.seed === false ? (null as unknown as Seed) : await seedTally(app)
  await app.http.listen({ host: '127.0.0.1', port: 0 })
  return { app, url: `http://127.0.0.1:${(app.http.server.address() as AddressInfo).port}`, seed }
}

/** Signs in on the login page with a personal API key (the key form of the sign-in page). */
export async function signInWithKey(page: Page, url: string, key: string): Promise<void> {
  await page.goto(`${url}/login`)
  await page.getByRole('button', { name: 'Sign in with a personal API key' }).click()
  await page.getByLabel('Personal API key').fill(key)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.locator('#main').waitFor()
}

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js')

/** axe-core on the page as it is now: the serious and critical violations (empty when accessible). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE })
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe
    const r = await axe.run(document)
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }))
  })
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.targets.join(', ')}`)
}

/** A full-page screenshot into SCREENSHOTS/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true })
}

/** On a new insight's Funnels tab, names the steps' events (Step 1, then "Add step" for each next one). */
export async function fillFunnelSteps(page: Page, events: readonly string[]): Promise<void> {
  await page.getByLabel('Step 1', { exact: true }).fill(events[0]!)
  for (const [i, event] of events.slice(1).entries()) {
    await page.getByRole('button', { name: 'Add step' }).click()
    await page.getByLabel(`Step ${i + 2}`, { exact: true }).fill(event)
  }
}
