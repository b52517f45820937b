import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { aBrowserEvent, waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts'

const ENV = { TALLY_WEBHOOK_ALLOW: '127.0.0.1', TALLY_SITE_URL: 'https://tally.example.com', TALLY_WEBHOOK_RETRY_MIN_MS: '50' }

testOnEachEngine('actions that notify: each matching event sends the action\'s message to the project\'s incoming webhook', async (t, engine) => {
  const receiver = await startWebhookReceiver(t)
  const app = await buildTestApp(t, { engine, env: ENV })
  const api = privateApi(app)
  const patched = await api.patch('/', { slack_incoming_webhook: receiver.url('/chat') })
  assert.equal(patched.statusCode, 200, patched.body)
  assert.equal((await api.get('/')).json().slack_incoming_webhook, receiver.url('/chat'))
  const notify = (await api.post('/actions/', {
    name: 'Signed up',
    post_to_chat: true,
    chat_message_format: '[action.name] by [person] on [event.properties.$current_url] ([event.event])',
    steps: [{ event: 'signed up' }],
  })).json()
  const plain = (await api.post('/actions/', { name: 'Default format', post_to_slack: true, slack_message_format: '', steps: [{ event: 'signed up', properties: [{ key: 'plan', value: 'pro', type: 'event' }] }] })).json()
  await api.post('/actions/', { name: 'Silent', post_to_chat: false, steps: [{ event: 'signed up' }] })
  await api.post('/actions/', { name: 'Other event', post_to_chat: true, steps: [{ event: 'churned' }] })
  const signup = aBrowserEvent(app.projectKey, { event: 'signed up', properties: { distinct_id: 'ada', plan: 'pro', $set: { email: 'ada@example.com' } } })
  const view = aBrowserEvent(app.projectKey, { event: '$pageview', properties: { distinct_id: 'ada' } })
  assert.equal((await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch: [signup, view] } })).statusCode, 200)
  await waitForEvents(app, 2)
  const got = await eventually(async () => receiver.requests.length >= 2 && receiver.requests)
  await new Promise((r) => setTimeout(r, 500))
  assert.equal(receiver.requests.length, 2, 'one message per (event, notifying action) and no more')
  const person = '[ada@example.com](https://tally.example.com/project/' + app.projectId + '/person/ada)'
  const texts = got.map((r) => JSON.parse(r.body).text).sort()
  assert.deepEqual(texts, [
    `[Default format](https://tally.example.com/project/${app.projectId}/action/${plain.id}) was triggered by ${person}`,
    `[Signed up](https://tally.example.com/project/${app.projectId}/action/${notify.id}) by ${person} on https://app.example.com/pricing (signed up)`,
  ].sort())
  assert.deepEqual(new Set(got.map((r) => r.headers['idempotency-key'])), new Set([`chat:${notify.id}:${signup.uuid}`, `chat:${plain.id}:${signup.uuid}`]))
  // Clearing the webhook stops the messages.
  await api.patch('/', { slack_incoming_webhook: null })
  assert.equal((await api.get('/')).json().slack_incoming_webhook, null)
  await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch: [aBrowserEvent(app.projectKey, { event: 'signed up' })] } })
  await waitForEvents(app, 3)
  await new Promise((r) => setTimeout(r, 500))
  assert.equal(receiver.requests.length, 2)
})

testOnEachEngine('actions that notify: a Slack webhook gets text and a mrkdwn block with Slack links', async (t, engine) => {
  const receiver = await startWebhookReceiver(t)
  const app = await buildTestApp(t, { engine, env: ENV })
  const api = privateApi(app)
  // The Slack shape is chosen by the URL, as PostHog does (it contains slack.com).
  await api.patch('/', { slack_incoming_webhook: receiver.url('/hooks.slack.com/services/T/B/X') })
  const action = (await api.post('/actions/', { name: 'Paid <big>', post_to_chat: true, steps: [{ event: 'paid' }] })).json()
  await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch: [aBrowserEvent(app.projectKey, { event: 'paid', properties: { distinct_id: 'bob' } })] } })
  const [r] = await eventually(async () => receiver.requests.length >= 1 && receiver.requests)
  const body = JSON.parse(r!.body)
  assert.equal(body.text, 'Paid &lt;big&gt; was triggered by bob')
  assert.deepEqual(body.blocks, [{
    type: 'section',
    text: { type: 'mrkdwn', text: `<https://tally.example.com/project/${app.projectId}/action/${action.id}|Paid &lt;big&gt;> was triggered by <https://tally.example.com/project/${app.projectId}/person/bob|bob>` },
  }])
})

testOnEachEngine('send test message: greets an allowed URL, names the problem otherwise', async (t, engine) => {
  const receiver = await startWebhookReceiver(t, (r) => (r.path === '/down' ? 503 : 200))
  const app = await buildTestApp(t, { engine, env: ENV })
  const post = (webhook: unknown) => app.http.inject({ method: 'POST', url: '/api/user/test_slack_webhook/', headers: app.auth, payload: { webhook } })
  const ok = await post(receiver.url('/chat'))
  assert.equal(ok.statusCode, 200)
  assert.deepEqual(ok.json(), { success: true })
  assert.deepEqual(JSON.parse(receiver.requests[0]!.body), { text: '_Greetings_ from Tally!' })
  const down = await post(receiver.url('/down'))
  assert.equal(down.statusCode, 400)
  assert.match(down.json().error, /503/)
  const metadata = await post('http://169.254.169.254/latest/')
  assert.equal(metadata.statusCode, 400)
  assert.match(metadata.json().error, /internal/)
  assert.equal((await post('')).json().error, 'no webhook URL')
  assert.equal((await post('gopher://x')).json().attr, 'webhook')
  assert.equal((await app.http.inject({ method: 'POST', url: '/api/user/test_slack_webhook/', payload: { webhook: receiver.url() } })).statusCode, 401)
  // A bad project setting is refused with the field named.
  const bad = await privateApi(app).patch('/', { slack_incoming_webhook: 'not a url' })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().attr, 'slack_incoming_webhook')
})
