import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { queryOk, seededApps, type TestEvent } from '../helpers/query-data.ts'

// TrendsQuery with `is_date_*` and `semver_*` property filters through the real HTTP query API.
// Each stored value comes with its meaning written out by hand (an instant, or whether the
// version is at least 1.2.0), and the expected counts are computed from those in plain JavaScript.
const DAYS = ['2024-06-01', '2024-06-02', '2024-06-03', '2024-06-04', '2024-06-05', '2024-06-06', '2024-06-07']
const CUTOFF = Date.UTC(2024, 2, 1) // 2024-03-01, the `is_date_after` filter value below

// A person's `signed_up` (set on every event of theirs) and the instant it means (null: no date).
const SIGNUPS: Array<[unknown, number | null]> = [
  ['2024-01-15', Date.UTC(2024, 0, 15)],
  ['2024-03-01T12:00:00Z', Date.UTC(2024, 2, 1, 12)],
  ['2024-03-01', CUTOFF], // the same instant is not after it
  [1709337600, Date.UTC(2024, 2, 2)], // Unix seconds as a JSON number
  ['1706745600', Date.UTC(2024, 1, 1)], // ... and as a string
  ['2024-03-01T01:00:00+02:00', Date.UTC(2024, 1, 29, 23)], // before the cutoff once in UTC
  ['2024-04-10 08:30:00', Date.UTC(2024, 3, 10, 8, 30)], // naive, read as UTC
  ['2024-02-30', null], // no such day
  ['soon', null],
  [undefined, null], // never set
]
// An event's `app_version` and whether it is `semver_gte` 1.2.0.
const VERSIONS: Array<[unknown, boolean]> = [
  ['1.2.0', true], ['1.10.0', true], ['1.9.9', true], ['1.1.9', false], ['v1.2.1', true], ['1.2', true],
  ['1.2.0-beta', false], ['2', true], ['0.99.0', false], ['10.0.0', true], ['garbage', false], [7, true], [undefined, false],
]

const now = Date.now()
const events: Array<TestEvent & { signup: number | null; recent: boolean; atLeast120: boolean }> = []
for (const [d, day] of DAYS.entries()) {
  for (const [u, [signedUp, signup]] of SIGNUPS.entries()) {
    for (let k = 0; k < 1 + ((u + d) % 3); k++) {
      const [version, atLeast120] = VERSIONS[(u * 5 + d * 3 + k) % VERSIONS.length]!
      const recent = (u + d + k) % 2 === 0
      const properties: Record<string, unknown> = { seen_at: recent ? new Date(now - 86_400_000).toISOString() : '2020-01-01T00:00:00Z' }
      if (version !== undefined) properties.app_version = version
      if (signedUp !== undefined) properties.$set = { signed_up: signedUp }
      const timestamp = new Date(Date.parse(`${day}T10:00:00Z`) + (u * 10 + k) * 1000).toISOString()
      events.push({ event: '$pageview', distinct_id: `user-${u}`, timestamp, properties, signup, recent, atLeast120 })
    }
  }
}

const perDay = (keep: (e: (typeof events)[number]) => boolean) => DAYS.map((day) => events.filter((e) => e.timestamp.startsWith(day) && keep(e)).length)
const trends = (properties: unknown[]) => ({
  kind: 'TrendsQuery', dateRange: { date_from: DAYS[0], date_to: DAYS[DAYS.length - 1] }, series: [{ kind: 'EventsNode', event: '$pageview' }], properties,
})

const seeded = seededApps(events.map(({ event, distinct_id, timestamp, properties }) => ({ event, distinct_id, timestamp, properties })))

testOnEachEngine('is_date_after on a person property counts the events of persons whose date is after the value', async (_t, engine) => {
  const app = seeded.app(engine)
  const body = await queryOk(app, trends([{ key: 'signed_up', type: 'person', operator: 'is_date_after', value: '2024-03-01' }]))
  const expected = perDay((e) => e.signup !== null && e.signup > CUTOFF)
  assert.ok(expected.some((n) => n > 0) && expected.some((n, i) => n < perDay(() => true)[i]!), 'the filter keeps some events, not all')
  assert.deepEqual(body.results[0].data, expected)
})

testOnEachEngine('is_date_before and is_date_exact on a person property', async (_t, engine) => {
  const app = seeded.app(engine)
  const before = await queryOk(app, trends([{ key: 'signed_up', type: 'person', operator: 'is_date_before', value: '2024-03-01T00:00:00Z' }]))
  assert.deepEqual(before.results[0].data, perDay((e) => e.signup !== null && e.signup < CUTOFF))
  const exact = await queryOk(app, trends([{ key: 'signed_up', type: 'person', operator: 'is_date_exact', value: '2024-03-02T00:00:00Z' }]))
  assert.deepEqual(exact.results[0].data, perDay((e) => e.signup === Date.UTC(2024, 2, 2)))
})

testOnEachEngine('is_date_after a relative date on an event property resolves it at query time', async (_t, engine) => {
  const app = seeded.app(engine)
  const body = await queryOk(app, trends([{ key: 'seen_at', type: 'event', operator: 'is_date_after', value: '-30d' }]))
  assert.deepEqual(body.results[0].data, perDay((e) => e.recent))
})

testOnEachEngine('semver_gte on an event property compares versions part by part, pre-releases first', async (_t, engine) => {
  const app = seeded.app(engine)
  const body = await queryOk(app, trends([{ key: 'app_version', type: 'event', operator: 'semver_gte', value: '1.2.0' }]))
  const expected = perDay((e) => e.atLeast120)
  assert.ok(expected.some((n) => n > 0), 'some events pass')
  assert.deepEqual(body.results[0].data, expected)
})

testOnEachEngine('date and version filters combine with each other and with other operators', async (_t, engine) => {
  const app = seeded.app(engine)
  const body = await queryOk(app, trends([
    { key: 'app_version', type: 'event', operator: 'semver_gte', value: '1.2.0' },
    { key: 'signed_up', type: 'person', operator: 'is_date_after', value: '2024-03-01' },
    { key: 'app_version', type: 'event', operator: 'is_set' },
  ]))
  assert.deepEqual(body.results[0].data, perDay((e) => e.atLeast120 && e.signup !== null && e.signup > CUTOFF))
})
