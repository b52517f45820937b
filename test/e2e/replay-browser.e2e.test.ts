import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { hasChromium, launchBrowser, servePage } from '../helpers/browser.ts'
import { eventually } from '../helpers/eventually.ts'
import { privateApi } from '../helpers/private-api.ts'
import { listRecordings } from '../helpers/replay.ts'
import { signInWithKey, startWebTally } from '../helpers/web-app.ts'

const skip = hasChromium ? false : 'Chromium not installed (apt-get install chromium)'
const FLAGS = ['--disable-blink-features=AutomationControlled']

/** A shop page that loads posthog-js from Tally's `/static/array.js`; recording comes from the project setting. */
function shopPage(projectKey: string, tally: string): string {
  return `<!doctype html><html><head><title>Shop</title></head><body style="min-height: 3000px">
<h1>Shop</h1>
<label>Name <input id="name" type="text"></label>
<div id="note" contenteditable="true" style="border: 1px solid #888; min-height: 40px"></div>
<button id="buy">Buy now</button>
<script src="${tally}/static/array.js"></script>
<script>
  posthog.init(${JSON.stringify(projectKey)}, {
    api_host: ${JSON.stringify(tally)}, persistence: 'localStorage', disable_surveys: true,
    request_queue_config: { flush_interval_ms: 250 },
    opt_out_useragent_filter: true, // headless Chromium's user agent reads as a bot
  })
</script></body></html>`
}

/** Polls the recordings list until the session's row passes `ok`; fails saying what it last saw. */
async function recordingReaches(app: Parameters<typeof listRecordings>[0], sessionId: string, ok: (r: Record<string, any>) => boolean, what: string) {
  let last: Record<string, any> | undefined
  try {
    await eventually(async () => {
      last = (await listRecordings(app, {})).results.find((r) => r.id === sessionId)
      return last !== undefined && ok(last)
    }, 100, 400)
  } catch {
    const seen = last && { clicks: last.click_count, console_errors: last.console_error_count, duration: last.recording_duration }
    assert.fail(`${what}: not stored; the recording's row: ${JSON.stringify(seen ?? null)}`)
  }
}

test('posthog-js records a session in Chromium; Tally lists it, serves its snapshots and the player replays it', { skip, timeout: 240_000 }, async (t) => {
  const { app, url: tally } = await startWebTally(t, { seed: false })
  const patched = await privateApi(app).patch('/', { session_recording_opt_in: true })
  assert.equal(patched.statusCode, 200, patched.body)
  const site = await servePage(t, shopPage(app.projectKey, tally))
  const browser = await launchBrowser(t, FLAGS)
  const tab = await browser.newPage()
  const snapshotAnswers: number[] = []
  const consoleErrors: string[] = []
  tab.on('response', (r) => r.url().startsWith(`${tally}/s/`) && snapshotAnswers.push(r.status()))
  tab.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()))

  await tab.goto(site)
  await eventually(() => tab.evaluate(() => (window as any).posthog?.sessionRecordingStarted?.() === true), 100, 100)
  const startedAt = Date.now()
  await tab.click('#name')
  await tab.keyboard.type('secret-name')
  await tab.click('#note')
  await tab.keyboard.type('hello replay')
  await tab.click('#buy')
  await tab.mouse.wheel(0, 1200)
  await tab.evaluate(() => console.error('boom from the shop'))
  const sessionId = await tab.evaluate(() => (window as any).posthog.get_session_id() as string)
  // posthog-js's recorder flushes what it buffered 2 s after it buffered it, while the page lives; what is
  // left at a navigation goes by the unload flush, which is best effort (a beacon, or a fetch the
  // navigation cuts off and the SDK sends again). So page one's clicks and console error must be stored
  // before the test navigates: under load, navigating 1.5 s after them left page one's last batch to the
  // unload flush, which lost it (CI: 3 clicks, never 4; here once the console error) or sent it twice.
  await recordingReaches(app, sessionId, (r) => r.click_count >= 3 && r.console_error_count >= 1, 'page one: 3 clicks and the console error')
  await tab.goto(`${site}/?page=2`)
  await eventually(() => tab.evaluate(() => (window as any).posthog?.sessionRecordingStarted?.() === true), 100, 100)
  assert.equal(await tab.evaluate(() => (window as any).posthog.get_session_id() as string), sessionId)
  await tab.click('#buy')
  const lastClickAt = Date.now()
  await recordingReaches(app, sessionId, (r) => r.click_count >= 4, 'page two: its click')

  assert.ok(snapshotAnswers.length >= 1 && snapshotAnswers.every((s) => s === 200), `/s/ answers: ${snapshotAnswers.join(', ')}`)
  assert.deepEqual(consoleErrors.filter((e) => !e.includes('boom from the shop')), [])
  const recording = (await listRecordings(app, {})).results.find((r) => r.id === sessionId)!
  assert.equal(recording.click_count, 4)
  assert.equal(recording.console_error_count, 1)
  // From before the first action (the page load) to the last click at least; no longer than the test.
  const span = (lastClickAt - startedAt) / 1000
  assert.ok(recording.recording_duration >= Math.floor(span) - 1, `duration ${recording.recording_duration} s, actions spanned ${span} s`)
  assert.ok(recording.recording_duration <= (Date.now() - startedAt) / 1000 + 5, `duration ${recording.recording_duration} s`)
  assert.match(String(recording.start_url), /^http:\/\/127\.0\.0\.1:\d+\/$/)

  const api = privateApi(app)
  const sources = (await api.get(`/session_recordings/${sessionId}/snapshots/`)).json().sources as { blob_key: string }[]
  assert.ok(sources.length >= 2)
  const lines = (await api.get(`/session_recordings/${sessionId}/snapshots/?source=blob_v2&start_blob_key=0&end_blob_key=${Math.min(sources.length, 20) - 1}`)).body
  const types = new Set(lines.trim().split('\n').map((l) => (JSON.parse(l) as [string, { type: number }])[1].type))
  assert.ok(types.has(2) && types.has(3) && types.has(4), `rrweb event types ${[...types].join(',')}`)

  const shots = mkdtempSync(path.join(os.tmpdir(), 'tally-replay-shots-'))
  if (process.env.DEBUG_BROWSER) writeFileSync(path.join(shots, 'lines.jsonl'), lines)
  // The web app's player: seek to the console error (logged on page one, after the typing).
  const viewer = await browser.newPage()
  await signInWithKey(viewer, tally, app.personalKey)
  await viewer.goto(`${tally}/replay/${sessionId}`)
  const frame = viewer.frameLocator('[data-testid="replay-frame"] iframe')
  viewer.on('console', (m) => process.env.DEBUG_BROWSER && console.log('viewer console:', m.type(), m.text()))
  await viewer.waitForTimeout(3000)
  await viewer.screenshot({ path: path.join(shots, 'player-loaded.png'), fullPage: true })
  console.log(`screenshots in ${shots}`)
  await viewer.getByRole('region', { name: 'Console' }).getByRole('button').first().click()
  await eventually(async () => (await frame.locator('#note').textContent({ timeout: 1000 }))?.includes('hello replay'))
  await viewer.screenshot({ path: path.join(shots, 'player.png'), fullPage: true })
  const typed = await frame.locator('#name').inputValue()
  assert.match(typed, /^\*+$/, `the input replays masked, got "${typed}"`)
  assert.equal(typed.length, 'secret-name'.length)
  // Before the scroll: the click on "Buy now" (third $autocapture on the timeline), the page's top in view.
  await viewer.getByRole('region', { name: 'Timeline' }).getByRole('button', { name: /\$autocapture/ }).nth(2).click()
  await viewer.waitForTimeout(500)
  await viewer.screenshot({ path: path.join(shots, 'player-before-scroll.png'), fullPage: true })
  await viewer.getByRole('button', { name: 'Play' }).click()
  await viewer.getByRole('button', { name: 'Pause' }).waitFor()
})
