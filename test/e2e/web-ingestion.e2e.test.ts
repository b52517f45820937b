import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { CHROMIUM, hasChromium, launchBrowser } from '../helpers/browser.ts'
import { eventually } from '../helpers/eventually.ts'
import { readAllEvents } from '../helpers/capture-helpers.ts'
import { switchableStore } from '../helpers/ingestion-outage.ts'
import { axeViolations, screenshot, signInWithKey, startWebTally } from '../helpers/web-app.ts'

assert.ok(hasChromium, `Chromium is needed at ${CHROMIUM} (apt-get install chromium)`)

test('web app Settings -> Ingestion: dead letters listed with their error, replayed with the button, then stored', async (t) => {
  const state = { poisoned: true }
  const store = switchableStore((batch) =>
    state.poisoned && batch.some((e) => e.properties.includes('"poison":true')) ? new Error('Conversion Error: Could not convert value') : null,
  )
  const { app, url } = await startWebTally(t, { seed: false, wrapEventStore: store.wrap, env: { TALLY_INGEST_RETRY_MIN_MS: '10' } })
  const batch = Array.from({ length: 6 }, (_, i) => ({ uuid: randomUUID(), event: 'order placed', distinct_id: `u${i}`, properties: { n: i, ...(i % 3 === 1 ? { poison: true } : {}) } }))
  assert.equal((await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })).statusCode, 200)
  await eventually(async () => (await app.http.inject({ url: `/api/projects/${app.projectId}/dead_letters/`, headers: app.auth })).json().count === 2)

  const browser = await launchBrowser(t)
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
  page.setDefaultTimeout(60_000)
  await signInWithKey(page, url, app.personalKey)
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click()
  await page.getByRole('tab', { name: 'Ingestion' }).click()
  const letters = page.getByRole('table', { name: 'Dead letters' })
  await letters.getByText(/Conversion Error/).first().waitFor()
  assert.equal(await letters.getByText('pending').count(), 2)
  assert.deepEqual(await axeViolations(page), [])
  await screenshot(page, 'settings-dead-letters')

  state.poisoned = false
  await page.getByRole('button', { name: 'Replay 2 pending' }).click()
  await page.getByText('Replayed 2.').waitFor()
  await eventually(async () => (await letters.getByText('replayed').count()) === 2)
  await eventually(async () => (await readAllEvents(app)).length === batch.length)
})
