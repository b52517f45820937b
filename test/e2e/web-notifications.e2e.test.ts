import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CHROMIUM, hasChromium, launchBrowser } from '../helpers/browser.ts'
import { eventually } from '../helpers/eventually.ts'
import { axeViolations, screenshot, signInWithKey, startWebTally } from '../helpers/web-app.ts'
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts'

assert.ok(hasChromium, `Chromium is needed at ${CHROMIUM} (apt-get install chromium)`)

test('web app Settings -> Notifications: incoming webhook with a test message, a destination with a test send and its deliveries', async (t) => {
  const receiver = await startWebhookReceiver(t)
  const { app, url } = await startWebTally(t, { seed: false, env: { TALLY_WEBHOOK_ALLOW: '127.0.0.1' } })
  const browser = await launchBrowser(t)
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
  page.setDefaultTimeout(60_000)
  await signInWithKey(page, url, app.personalKey)
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click()
  await page.getByRole('tab', { name: 'Notifications' }).click()

  await page.getByLabel('Incoming webhook URL').fill(receiver.url('/chat'))
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByText('Saved.').waitFor()
  assert.equal((await app.http.inject({ url: `/api/projects/${app.projectId}/`, headers: app.auth })).json().slack_incoming_webhook, receiver.url('/chat'))
  await page.getByRole('button', { name: 'Send test message' }).click()
  await page.getByText('Test message sent.').waitFor()
  assert.deepEqual(JSON.parse(receiver.requests.find((r) => r.path === '/chat')!.body), { text: '_Greetings_ from Tally!' })

  await page.getByLabel('Name').fill('Warehouse')
  await page.getByLabel('URL', { exact: true }).fill(receiver.url('/dest'))
  await page.getByLabel('Events').fill('order placed')
  await page.getByRole('button', { name: 'Add destination' }).click()
  await page.getByText('Warehouse').waitFor()
  await page.getByRole('button', { name: 'Test send' }).click()
  await page.getByText('Test sent: 200').waitFor()

  const batch = [{ event: 'order placed', distinct_id: 'u1', properties: { total: 12 } }, { event: 'viewed', distinct_id: 'u1' }]
  assert.equal((await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })).statusCode, 200)
  await eventually(async () => receiver.requests.filter((r) => r.path === '/dest').length === 2)
  await page.getByRole('button', { name: 'Deliveries' }).click()
  await page.getByRole('cell', { name: 'sent' }).waitFor()
  assert.equal(await page.locator('tbody tr').count(), 1, 'the event that passed the filter, once (the test send is not a delivery)')
  assert.deepEqual(await axeViolations(page), [])
  await screenshot(page, 'settings-notifications')
})
