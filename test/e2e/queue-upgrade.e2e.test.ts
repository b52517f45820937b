import assert from 'node:assert/strict'
import path from 'node:path'
import { test, type TestContext } from 'node:test'
import { encodeQueuedEvent } from '../../src/ingestion/queued-event.ts'
import type { EventQueue } from '../../src/queue/event-queue.ts'
import { openFileEventQueue } from '../../src/queue/file-event-queue.ts'
import { openNatsEventQueue } from '../../src/queue/nats-event-queue.ts'
import { readAllEvents, type EventJson } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { natsQueueEnv, TEST_NATS_URL } from '../helpers/nats-server.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'

// An upgrade with a backlog: the queue holds messages the previous version wrote (a header of seven
// fields, no step properties or shape beside the properties). The new worker stores them exactly as
// it stores the same events in today's format: persons, groups, GeoIP, personless stripping included.

const T0 = Date.parse('2026-03-01T10:00:00Z')
const SE = '89.160.20.112'

/** The events of one world; `w` prefixes every distinct id and group key so two worlds do not meet. */
function events(w: string) {
  return [
    { event: '$pageview', distinctId: `${w}anon`, properties: { $current_url: 'https://x/', $ip: SE, n: 1 } },
    { event: '$identify', distinctId: `${w}user`, properties: { $anon_distinct_id: `${w}anon`, $set: { plan: 'pro' }, $set_once: { first: 'a' }, $ip: '127.0.0.1' } },
    { event: 'bought', distinctId: `${w}user`, properties: { $groups: { company: `${w}acme` }, amount: 5, $unset: ['first'] } },
    { event: '$groupidentify', distinctId: `${w}user`, properties: { $group_type: 'company', $group_key: `${w}acme`, $group_set: { size: 10 } } },
    { event: 'quiet', distinctId: `${w}nobody`, properties: { $process_person_profile: false, $set: { dropped: true }, kept: 'yes' } },
    { event: 'clicked', distinctId: `${w}user`, properties: { $ip: SE, $set: { color: 'red' }, $groups: { company: `${w}acme` } }, elementsChain: 'button:text="Buy"nth-child="1"' },
  ].map((e, i) => ({ ...e, uuid: `0190e0a0-0000-7000-8000-${w === 'old-' ? '1' : '2'}${String(i).padStart(11, '0')}`, at: T0 + i * 1000 }))
}

/** A message as the version before step properties wrote it. */
function previousFormat(projectId: number, e: ReturnType<typeof events>[number]): string {
  return `${JSON.stringify([e.uuid, projectId, e.event, e.distinctId, e.at, e.at, e.elementsChain ?? ''])}\t${JSON.stringify(e.properties)}`
}

function currentFormat(projectId: number, e: ReturnType<typeof events>[number]): string {
  return encodeQueuedEvent(projectId, {
    uuid: e.uuid, event: e.event, distinctId: e.distinctId, properties: e.properties, elementsChain: e.elementsChain ?? '',
    timestamp: new Date(e.at), createdAt: new Date(e.at), sentAt: null,
  })
}

/** The queue the app of `config` opens (create-adapters.ts), for a publisher of the test's own. */
function openQueueOf(app: TestApp): Promise<EventQueue> {
  const { storage } = app.config
  if (storage.nats) {
    return openNatsEventQueue({ servers: [...storage.nats.servers], stream: storage.nats.stream, consumer: storage.nats.consumer, replicas: storage.nats.replicas })
  }
  return openFileEventQueue({ dir: path.join(storage.dataDir, 'queue'), segmentBytes: storage.queueSegmentBytes })
}

/** An event, a world's prefix and ids taken out: what must be equal across the two worlds. */
function comparable(e: EventJson): unknown {
  const { id: _id, person: _person, ...rest } = e
  return JSON.parse(JSON.stringify(rest).replaceAll(/(old|new)-/g, ''))
}

/** The person of a distinct id (its distinct ids and properties), a world's prefix and ids taken out. */
async function personOf(app: TestApp, distinctId: string): Promise<{ distinctIds: string[]; properties: Record<string, unknown> } | undefined> {
  const r = await app.http.inject({ url: `/api/projects/${app.projectId}/persons/?distinct_id=${distinctId}`, headers: app.auth })
  const found = (r.json() as { results: Array<{ distinct_ids: string[]; properties: Record<string, unknown> }> }).results[0]
  if (found === undefined) return undefined
  const { $creator_event_uuid: _creator, ...properties } = found.properties
  return JSON.parse(JSON.stringify({ distinctIds: [...found.distinct_ids].sort(), properties }).replaceAll(/(old|new)-/g, ''))
}

async function upgradeWithBacklog(t: TestContext, env: Record<string, string>) {
  const before = await buildTestApp(t, { env })
  const { projectId, dataDir } = before
  await before.close()

  // The backlog: the previous version's messages, then today's, published while no worker runs.
  const queue = await openQueueOf(before)
  await queue.publish(events('old-').map((e) => previousFormat(projectId, e)))
  await queue.publish(events('new-').map((e) => currentFormat(projectId, e)))
  await queue.close()

  const app = await buildTestApp(t, { env: { ...env, TALLY_PROJECT_API_KEY: before.projectKey, TALLY_PERSONAL_API_KEY: before.personalKey }, dataDir })
  const stored = await eventually(async () => {
    const all = await readAllEvents(app)
    return all.length === 12 && all
  })
  const byWorld = (w: string) => stored.filter((e) => e.distinct_id.startsWith(w)).sort((a, b) => a.timestamp.localeCompare(b.timestamp)).map(comparable)
  const old = byWorld('old-')
  assert.equal(old.length, 6, 'every message of the previous format is stored')
  assert.deepEqual(old, byWorld('new-'))
  // The transformations happened, not only agreed: GeoIP, groups, personless stripping.
  const [pageview, , bought, , quiet, clicked] = old as Array<{ properties: Record<string, unknown> }>
  assert.equal(pageview!.properties.$geoip_city_name, 'Stockholm')
  assert.equal(bought!.properties.$group_0, 'acme')
  assert.deepEqual(quiet!.properties, { $process_person_profile: false, kept: 'yes' })
  assert.equal(clicked!.properties.$geoip_country_code, 'SE')
  assert.deepEqual((clicked!.properties.$set as Record<string, unknown>).color, 'red')

  const oldPerson = await eventually(() => personOf(app, 'old-user'))
  assert.deepEqual(oldPerson, await personOf(app, 'new-user'))
  assert.deepEqual(oldPerson.distinctIds, ['anon', 'user'], '$identify merged the anonymous id')
  assert.equal(oldPerson.properties.plan, 'pro')
  assert.equal(oldPerson.properties.color, 'red')
  assert.equal(await personOf(app, 'old-nobody'), undefined, 'a personless event makes no person')
}

test('a file queue backlog written by the previous version is stored as today\'s messages are', (t) => upgradeWithBacklog(t, {}))

test('a NATS backlog written by the previous version is stored as today\'s messages are', { skip: !TEST_NATS_URL && 'TEST_NATS_URL is not set' }, (t) =>
  upgradeWithBacklog(t, natsQueueEnv(t) ?? {}))
