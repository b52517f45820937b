import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decidePersonProperties, withLocation, withLocationText, type GeoLocation } from './geoip-properties.ts'

const STOCKHOLM: GeoLocation = {
  cityName: 'Stockholm', countryCode: 'SE', countryName: 'Sweden', continentCode: 'EU', continentName: 'Europe',
  latitude: 59.332698822021484, longitude: 18.06559944152832, timeZone: 'Europe/Stockholm', subdivisions: [{ code: 'AB', name: 'Stockholm' }],
}

test('withLocation follows PostHog\'s GeoIP transformation: event keys, $set, $set_once, known keys nulled, the client\'s $set kept', () => {
  const out = withLocation({ $ip: '89.160.20.112', $set: { plan: 'pro', $geoip_city_name: 'Mine' }, $set_once: { first: 1 } }, STOCKHOLM)
  assert.equal(out.$geoip_country_code, 'SE')
  assert.equal(out.$geoip_latitude, 59.3327, 'coordinates to 4 decimals')
  assert.equal(out.$geoip_subdivision_1_code, 'AB')
  const set = out.$set as Record<string, unknown>
  const once = out.$set_once as Record<string, unknown>
  assert.equal(set.plan, 'pro')
  assert.equal(set.$geoip_city_name, 'Stockholm', 'the location wins over the client\'s own geoip key')
  assert.equal(set.$geoip_postal_code, null, 'a key the location lacks is nulled')
  assert.equal(set.$geoip_accuracy_radius, null)
  assert.equal(once.first, 1)
  assert.equal(once.$initial_geoip_country_code, 'SE')
  assert.equal(once.$initial_geoip_postal_code, null)
})

test('withLocationText is JSON.stringify(withLocation(...)) byte for byte, on the fast path and off it', () => {
  const cases: Array<Record<string, unknown>> = [
    {},
    { $ip: '1.2.3.4' },
    { $ip: '1.2.3.4', $current_url: 'https://x.example/a?b="c"', n: 1, nested: { a: [1, 2] } },
    { $ip: '1.2.3.4', $set: { plan: 'pro' } },
    { $ip: '1.2.3.4', $set_once: { first: true } },
    { $ip: '1.2.3.4', $geoip_country_code: 'XX' },
  ]
  for (const properties of cases) {
    const text = JSON.stringify(properties)
    assert.equal(withLocationText(text, properties, STOCKHOLM), JSON.stringify(withLocation(properties, STOCKHOLM)), text)
    JSON.parse(withLocationText(text, properties, STOCKHOLM))
  }
})

test('/decide gets PostHog\'s seven geoip person properties', () => {
  assert.deepEqual(decidePersonProperties(STOCKHOLM), {
    $geoip_city_name: 'Stockholm', $geoip_country_name: 'Sweden', $geoip_country_code: 'SE',
    $geoip_continent_name: 'Europe', $geoip_continent_code: 'EU', $geoip_time_zone: 'Europe/Stockholm',
  })
})
