import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { captureEvents, queryOk, seededRandom, type TestEvent } from '../helpers/query-data.ts'

// 25 persons over 2024-06-01..2024-06-12; persons 0-4 browse anonymously before identifying on day 4.
// Expectations are computed here from the events (per person sets of active days), not by SQL.
const rand = seededRandom(7)
const DAYS = Array.from({ length: 12 }, (_, i) => `2024-06-${String(i + 1).padStart(2, '0')}`)
const events: TestEvent[] = []
for (const [d, day] of DAYS.entries()) {
  for (let p = 0; p < 25; p++) {
    if (rand() < 0.5) continue
    const distinctId = p < 5 && d < 4 ? `anon-${p}` : `user-${p}`
    events.push({ event: rand() < 0.7 ? 'play' : 'other', distinct_id: distinctId, timestamp: `${day}T${String(p % 24).padStart(2, '0')}:10:00Z` })
  }
}
for (let p = 0; p < 5; p++) events.push({ event: '$identify', distinct_id: `user-${p}`, timestamp: `${DAYS[4]}T23:00:00Z`, properties: { $anon_distinct_id: `anon-${p}` } })

const personOf = (id: string) => id.replace(/^anon-/, 'user-')
const RANGE = DAYS.slice(4, 10) // 2024-06-05..2024-06-10
const dateRange = { date_from: RANGE[0], date_to: RANGE[RANGE.length - 1] }
/** Days on which each person did `play` (any day, not only the range). */
function activeDays(filter: (e: TestEvent) => boolean): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>()
  for (const e of events.filter(filter)) {
    const p = personOf(e.distinct_id)
    out.set(p, (out.get(p) ?? new Set()).add(e.timestamp.slice(0, 10)))
  }
  return out
}
const prevDay = (d: string) => new Date(Date.parse(`${d}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10)

testOnEachEngine('stickiness and lifecycle over persons merged by $identify, against per-person day sets', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, events)
  const plays = activeDays((e) => e.event === 'play')

  // Stickiness: persons by how many days of the range they played.
  const stickiness = await queryOk(app, { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: 'play' }], dateRange })
  const expected = RANGE.map(() => 0)
  for (const days of plays.values()) {
    const n = RANGE.filter((d) => days.has(d)).length
    if (n > 0) expected[n - 1]!++
  }
  const [s] = stickiness.results
  assert.deepEqual(s.data, expected)
  assert.deepEqual(s.days, RANGE.map((_, i) => i + 1))
  assert.deepEqual(s.labels.slice(0, 2), ['1 day', '2 days'])

  // Lifecycle: first seen = the person's first event of any kind.
  const firstSeen = new Map<string, string>()
  for (const e of [...events].sort((a, b) => a.timestamp.localeCompare(b.timestamp))) {
    const p = personOf(e.distinct_id)
    if (!firstSeen.has(p)) firstSeen.set(p, e.timestamp.slice(0, 10))
  }
  const status = { new: RANGE.map(() => 0), returning: RANGE.map(() => 0), resurrecting: RANGE.map(() => 0), dormant: RANGE.map(() => 0) }
  for (const [p, days] of plays) {
    RANGE.forEach((d, i) => {
      const before = days.has(prevDay(d))
      if (days.has(d)) {
        if (firstSeen.get(p) === d) status.new[i]!++
        else if (before) status.returning[i]!++
        else status.resurrecting[i]!++
      } else if (before) status.dormant[i]!--
    })
  }
  const lifecycle = await queryOk(app, { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: 'play' }], dateRange })
  assert.deepEqual(lifecycle.results.map((r: { status: string }) => r.status), ['new', 'returning', 'resurrecting', 'dormant'])
  for (const r of lifecycle.results) {
    assert.deepEqual(r.data, status[r.status as keyof typeof status], r.status)
    assert.equal(r.label, `play - ${r.status}`)
    assert.deepEqual(r.days, RANGE)
  }
  assert.ok(status.dormant.some((v) => v < 0) && status.resurrecting.some((v) => v > 0), 'the data set exercises every status')
})

testOnEachEngine('stickiness and lifecycle refuse what they cannot compute, naming the field', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const cases: Array<[unknown, string]> = [
    [{ kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: 'a' }, { kind: 'EventsNode', event: 'b' }] }, 'query.series'],
    [{ kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: 'a', math: 'sum', math_property: 'x' }] }, 'query.series.0.math'],
    [{ kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: 'a' }], interval: 'minute' }, 'query.interval'],
  ]
  for (const [query, attr] of cases) {
    const res = await app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/query/`, headers: app.auth, payload: { query } })
    assert.equal(res.statusCode, 400, res.body)
    assert.equal(res.json().attr, attr)
  }
})
