import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { queryOk, seededApps, type TestEvent } from '../helpers/query-data.ts'

// Stickiness as PostHog's StickinessQueryRunner answers it: compare (setup_series: each series then its
// previous period, `compare_label`) and an hourly range with a date-only date_to (QueryDateRange.date_to:
// that day's 00:00, so the last bucket holds only events at 00:00:00). Counts are read off the events.
const play = (who: string, at: string): TestEvent => ({ event: 'play', distinct_id: who, timestamp: at })
const events: TestEvent[] = [
  // Current period 2024-06-03..05: a on 3 days, b on 1 day.
  play('a', '2024-06-03T10:00:00Z'), play('a', '2024-06-04T10:00:00Z'), play('a', '2024-06-05T10:00:00Z'), play('b', '2024-06-04T12:00:00Z'),
  // Previous period 2024-05-31..06-02: c and d on 2 days each, a on 1.
  play('c', '2024-05-31T10:00:00Z'), play('c', '2024-06-01T10:00:00Z'), play('d', '2024-06-01T11:00:00Z'), play('d', '2024-06-02T11:00:00Z'), play('a', '2024-06-02T09:00:00Z'),
  // Hourly on 2024-06-10: h1 in two hours, h2 at 00:00:00 of the 11th exactly, h3 later on the 11th.
  play('h1', '2024-06-10T10:05:00Z'), play('h1', '2024-06-10T11:05:00Z'), play('h2', '2024-06-11T00:00:00Z'), play('h3', '2024-06-11T05:00:00Z'),
]

const seeded = seededApps(events)

testOnEachEngine('stickiness with compareFilter.compare: the previous period follows its series, with compare_label', async (_t, engine) => {
  const series = [{ kind: 'EventsNode', event: 'play' }, { kind: 'EventsNode', event: 'play', custom_name: 'again' }]
  const body = await queryOk(seeded.app(engine), { kind: 'StickinessQuery', series, interval: 'day', dateRange: { date_from: '2024-06-03', date_to: '2024-06-05' }, compareFilter: { compare: true } })
  assert.deepEqual(body.results.map((r: Record<string, unknown>) => [r.label, r.compare, r.compare_label, r.data]), [
    ['play', true, 'current', [1, 0, 1]],
    ['play', true, 'previous', [1, 2, 0]],
    ['again', true, 'current', [1, 0, 1]],
    ['again', true, 'previous', [1, 2, 0]],
  ])
  assert.deepEqual(body.results[1].days, [1, 2, 3])

  const plain = await queryOk(seeded.app(engine), { kind: 'StickinessQuery', series: [series[0]], interval: 'day', dateRange: { date_from: '2024-06-03', date_to: '2024-06-05' } })
  assert.equal(plain.results.length, 1)
  assert.equal('compare_label' in plain.results[0], false)
})

testOnEachEngine('stickiness by hour with a date-only date_to ends at that day\'s 00:00: 25 buckets for a one-day range', async (_t, engine) => {
  const body = await queryOk(seeded.app(engine), { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: 'play' }], interval: 'hour', dateRange: { date_from: '2024-06-10', date_to: '2024-06-11' } })
  const [r] = body.results
  assert.equal(r.data.length, 25)
  assert.deepEqual(r.data.slice(0, 3), [1, 1, 0], 'h2 in one hour (00:00:00 of the 11th), h1 in two; h3 is past the end')
  assert.equal(r.count, 2)
  assert.equal(r.labels[24], '25 hours')

  // A date_to with a time keeps its own end (to the end of that hour).
  const timed = await queryOk(seeded.app(engine), { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: 'play' }], interval: 'hour', dateRange: { date_from: '2024-06-10', date_to: '2024-06-11T05:30:00' } })
  assert.equal(timed.results[0].data.length, 30)
  assert.equal(timed.results[0].count, 3)
})
