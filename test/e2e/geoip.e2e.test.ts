import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileTestProjects, type TestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'

// One app (per engine) for the file, a project of its own per test: each test reads only its own events.
const project = fileTestProjects()

// Public addresses whose place is public knowledge: Google's resolver (Mountain View, California),
// Cloudflare's (Sydney, APNIC's), and MaxMind's own test addresses in Stockholm and London. The
// answers below are what those addresses are, not what this code computed.
const SE = '89.160.20.112'
const US = '8.8.8.8'
const GB = '81.2.69.142'
const CA_V6 = '2001:4860:4860::8888'

async function capture(app: TestApp, batch: unknown[], remoteAddress = '127.0.0.1') {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', remoteAddress, payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
}

async function person(app: TestApp, distinctId: string): Promise<Record<string, unknown>> {
  return eventually(async () => {
    const r = await app.http.inject({ url: `/api/projects/${app.projectId}/persons/?distinct_id=${distinctId}`, headers: app.auth })
    const found = (r.json() as { results: Array<{ properties: Record<string, unknown> }> }).results[0]
    return found?.properties
  })
}

test('an event from a public address gets its location as $geoip_* properties, from $ip or from the request address', async () => {
  const app = await project()
  await capture(app, [{ event: 'from ip property', distinct_id: 'a', properties: { $ip: US } }])
  await capture(app, [{ event: 'from request', distinct_id: 'b', properties: {} }], SE)
  await capture(app, [{ event: 'ipv6', distinct_id: 'c', properties: { $ip: CA_V6 } }])
  const events = await waitForEvents(app, 3)
  const byName = new Map(events.map((e) => [e.event, e.properties]))

  const us = byName.get('from ip property')!
  assert.equal(us.$geoip_country_code, 'US')
  assert.equal(us.$geoip_country_name, 'United States')
  assert.equal(us.$geoip_continent_code, 'NA')
  assert.equal(us.$geoip_continent_name, 'North America')
  assert.equal(us.$geoip_subdivision_1_code, 'CA')
  assert.equal(us.$geoip_subdivision_1_name, 'California')
  assert.equal(us.$geoip_time_zone, 'America/Los_Angeles')
  assert.equal(typeof us.$geoip_city_name, 'string')
  assert.ok(Math.abs((us.$geoip_latitude as number) - 37.4) < 1 && Math.abs((us.$geoip_longitude as number) + 122.1) < 1, `Bay Area: ${us.$geoip_latitude},${us.$geoip_longitude}`)

  const se = byName.get('from request')!
  assert.equal(se.$ip, SE, 'capture set $ip from the request')
  assert.deepEqual([se.$geoip_country_code, se.$geoip_country_name, se.$geoip_city_name, se.$geoip_continent_code, se.$geoip_time_zone], ['SE', 'Sweden', 'Stockholm', 'EU', 'Europe/Stockholm'])

  assert.equal(byName.get('ipv6')!.$geoip_country_code, 'CA')
})

test('the person gets $set $geoip_* (the latest place) and $set_once $initial_geoip_* (the first), as PostHog\'s GeoIP does', async () => {
  const app = await project()
  await capture(app, [{ event: 'first', distinct_id: 'traveller', timestamp: '2024-06-01T10:00:00Z', properties: { $ip: GB, $set: { plan: 'pro' } } }])
  await waitForEvents(app, 1)
  await capture(app, [{ event: 'second', distinct_id: 'traveller', timestamp: '2024-06-02T10:00:00Z', properties: { $ip: SE } }])
  await waitForEvents(app, 2)
  const props = await eventually(async () => {
    const p = await person(app, 'traveller')
    return p?.$geoip_country_code === 'SE' && p
  })
  assert.equal(props.plan, 'pro', 'the client\'s own $set is kept')
  assert.equal(props.$geoip_city_name, 'Stockholm')
  assert.equal(props.$initial_geoip_country_code, 'GB')
  assert.equal(props.$initial_geoip_city_name, 'London')
  assert.equal(props.$initial_geoip_subdivision_1_code, 'ENG')
})

test('loopback and private addresses, $geoip_disable and a project with GeoIP off get no location', async () => {
  const app = await project()
  await capture(app, [
    { event: 'loopback', distinct_id: 'a', properties: {} },
    { event: 'private', distinct_id: 'a', properties: { $ip: '10.1.2.3' } },
    { event: 'link-local', distinct_id: 'a', properties: { $ip: 'fe80::1' } },
    { event: 'disabled', distinct_id: 'a', properties: { $ip: US, $geoip_disable: true } },
    { event: 'not an address', distinct_id: 'a', properties: { $ip: 'somewhere' } },
  ])
  const events = await waitForEvents(app, 5)
  for (const e of events) {
    assert.deepEqual(Object.keys(e.properties).filter((k) => k.startsWith('$geoip_') && k !== '$geoip_disable'), [], e.event)
  }
  const patch = await app.http.inject({ method: 'PATCH', url: `/api/projects/${app.projectId}/`, headers: app.auth, payload: { geoip_enabled: false } })
  assert.equal(patch.statusCode, 200, patch.body)
  assert.equal(patch.json().geoip_enabled, false)
  await capture(app, [{ event: 'project off', distinct_id: 'b', properties: { $ip: US } }])
  const [off] = (await waitForEvents(app, 6)).filter((e) => e.event === 'project off')
  assert.equal(off!.properties.$geoip_country_code, undefined)
  assert.equal(off!.properties.$ip, US)
})

test('anonymize_ips stores no $ip, and the location is still added', async () => {
  const app = await project()
  const before = await app.http.inject({ url: `/api/projects/${app.projectId}/`, headers: app.auth })
  assert.deepEqual([before.json().anonymize_ips, before.json().geoip_enabled], [false, true], 'PostHog\'s default and GeoIP on by default')
  const patch = await app.http.inject({ method: 'PATCH', url: `/api/projects/${app.projectId}/`, headers: app.auth, payload: { anonymize_ips: true } })
  assert.equal(patch.json().anonymize_ips, true)
  await capture(app, [{ event: 'private person', distinct_id: 'p', properties: { plan: 'free' } }], GB)
  await capture(app, [{ event: 'loopback', distinct_id: 'p', properties: {} }])
  const events = await waitForEvents(app, 2)
  for (const e of events) assert.equal('$ip' in e.properties, false, `${e.event} keeps no $ip`)
  const gb = events.find((e) => e.event === 'private person')!
  assert.equal(gb.properties.$geoip_country_code, 'GB')
  assert.equal(gb.properties.plan, 'free')
  const bad = await app.http.inject({ method: 'PATCH', url: `/api/projects/${app.projectId}/`, headers: app.auth, payload: { anonymize_ips: 'perhaps' } })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().attr, 'anonymize_ips')
})

test('/decide evaluates flags on the caller\'s location unless geoip_disable; supplied person properties win', async () => {
  const app = await project()
  const flag = await app.http.inject({
    method: 'POST', url: `/api/projects/${app.projectId}/feature_flags/`, headers: app.auth,
    payload: { key: 'sweden-only', filters: { groups: [{ properties: [{ key: '$geoip_country_code', type: 'person', operator: 'exact', value: ['SE'] }], rollout_percentage: 100 }] } },
  })
  assert.equal(flag.statusCode, 201, flag.body)
  const decide = async (body: Record<string, unknown>, remoteAddress: string) => {
    const r = await app.http.inject({ method: 'POST', url: '/flags/?v=2', remoteAddress, payload: { token: app.projectKey, distinct_id: 'visitor', ...body } })
    assert.equal(r.statusCode, 200, r.body)
    return (r.json() as { flags: Record<string, { enabled: boolean }> }).flags['sweden-only']!.enabled
  }
  assert.equal(await decide({}, SE), true, 'a caller in Stockholm')
  assert.equal(await decide({}, US), false, 'a caller in the US')
  assert.equal(await decide({ geoip_disable: true }, SE), false, 'geoip_disable (posthog-node\'s default)')
  assert.equal(await decide({}, '127.0.0.1'), false, 'loopback has no place')
  assert.equal(await decide({ person_properties: { $geoip_country_code: 'SE' } }, US), true, 'supplied properties win')
  assert.equal(await decide({ person_properties: { $geoip_country_code: null } }, SE), true, 'a supplied null is filled from the address')
})
