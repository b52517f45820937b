import assert from 'node:assert/strict'
import { test } from 'node:test'
import { bucketKey, offsetSegments, shiftKey } from './bucket-keys.ts'
import { bucketDay, bucketLabel, previousPeriod, resolveDateRange } from './date-range.ts'
import { AppError } from '../../shared/errors.ts'

const now = new Date('2024-06-15T13:45:00Z')
const days = (r: ReturnType<typeof resolveDateRange>) => r.buckets.map((b) => bucketDay(b, r.interval, r.timeZone))

test('relative ranges round to whole days in the zone: -7d is 8 days ending today', () => {
  const r = resolveDateRange({ date_from: '-7d' }, 'day', { now, timeZone: 'UTC' })
  assert.deepEqual(days(r), ['2024-06-08', '2024-06-09', '2024-06-10', '2024-06-11', '2024-06-12', '2024-06-13', '2024-06-14', '2024-06-15'])
  assert.equal(r.to.toISOString(), '2024-06-16T00:00:00.000Z')
  // In Tokyo it is already the evening of the 15th: the same instant, other days.
  const tokyo = resolveDateRange({ date_from: '-1d' }, 'day', { now: new Date('2024-06-15T20:00:00Z'), timeZone: 'Asia/Tokyo' })
  assert.deepEqual(days(tokyo), ['2024-06-15', '2024-06-16'])
  assert.equal(tokyo.from.toISOString(), '2024-06-14T15:00:00.000Z')
})

test('mStart, yStart, dStart, -1mStart/-1mEnd and -24h', () => {
  const month = resolveDateRange({ date_from: 'mStart' }, 'day', { now, timeZone: 'UTC' })
  assert.equal(days(month)[0], '2024-06-01')
  assert.equal(days(resolveDateRange({ date_from: 'yStart' }, 'month', { now, timeZone: 'UTC' }))[0], '2024-01-01')
  assert.deepEqual(days(resolveDateRange({ date_from: 'dStart' }, 'day', { now, timeZone: 'UTC' })), ['2024-06-15'])
  const lastMonth = resolveDateRange({ date_from: '-1mStart', date_to: '-1mEnd' }, 'day', { now, timeZone: 'UTC' })
  assert.equal(days(lastMonth)[0], '2024-05-01')
  assert.equal(days(lastMonth).at(-1), '2024-05-31')
  const hours = resolveDateRange({ date_from: '-24h' }, 'hour', { now, timeZone: 'UTC' })
  assert.equal(hours.buckets.length, 25)
  assert.equal(bucketLabel(hours.buckets[0]!, 'hour', 'UTC'), '14-Jun-2024 13:00')
})

test('absolute dates are local to the zone; date_to is inclusive of its day unless explicitDate', () => {
  const r = resolveDateRange({ date_from: '2024-03-30', date_to: '2024-04-01' }, 'day', { now, timeZone: 'Europe/Amsterdam' })
  assert.equal(r.from.toISOString(), '2024-03-29T23:00:00.000Z')
  assert.equal(r.to.toISOString(), '2024-04-01T22:00:00.000Z')
  assert.deepEqual(r.buckets.map((b) => b.toISOString()), ['2024-03-29T23:00:00.000Z', '2024-03-30T23:00:00.000Z', '2024-03-31T22:00:00.000Z'])
  const explicit = resolveDateRange({ date_from: '2024-03-30T10:00:00Z', date_to: '2024-03-30T12:00:00Z', explicitDate: true }, 'hour', { now, timeZone: 'UTC' })
  assert.equal(explicit.from.toISOString(), '2024-03-30T10:00:00.000Z')
  assert.equal(explicit.buckets.length, 3)
})

test('all starts at the earliest event; bad dates name the field', () => {
  const r = resolveDateRange({ date_from: 'all' }, 'month', { now, timeZone: 'UTC', earliest: new Date('2023-11-20T00:00:00Z') })
  assert.equal(days(r)[0], '2023-11-01')
  for (const [input, attr] of [[{ date_from: 'soon' }, 'dateRange.date_from'], [{ date_from: '2024-13-01' }, 'dateRange.date_from'], [{ date_from: '-1d', date_to: '-3d' }, 'dateRange.date_to']] as const) {
    assert.throws(() => resolveDateRange(input, 'day', { now, timeZone: 'UTC' }), (e: unknown) => e instanceof AppError && e.attr === attr)
  }
})

test('previous period: the same number of buckets ending where the range starts', () => {
  const r = resolveDateRange({ date_from: '2024-06-08', date_to: '2024-06-14' }, 'day', { now, timeZone: 'UTC' })
  const p = previousPeriod(r)
  assert.deepEqual(days(p), ['2024-06-01', '2024-06-02', '2024-06-03', '2024-06-04', '2024-06-05', '2024-06-06', '2024-06-07'])
})

test('bucket keys: days are 86,400,000 apart across DST, hours unique in a fall-back, weeks start on Sunday', () => {
  const zone = 'Europe/Amsterdam'
  const r = resolveDateRange({ date_from: '2024-10-26', date_to: '2024-10-28' }, 'day', { now, timeZone: zone })
  const keys = r.buckets.map((b) => bucketKey(b, 'day', zone))
  assert.deepEqual(keys.map((k) => k - keys[0]!), [0, 86_400_000, 2 * 86_400_000])
  assert.equal(shiftKey(keys[0]!, 'day', 2), keys[2])
  const hours = resolveDateRange({ date_from: '2024-10-27', date_to: '2024-10-27' }, 'hour', { now, timeZone: zone })
  assert.equal(new Set(hours.buckets.map((b) => bucketKey(b, 'hour', zone))).size, 25)
  assert.equal(new Date(bucketKey(new Date('2024-06-12T10:00:00Z'), 'week', 'UTC')).toISOString(), '2024-06-09T00:00:00.000Z')
  assert.equal(new Date(shiftKey(Date.UTC(2024, 0, 1), 'month', 13)).toISOString(), '2025-02-01T00:00:00.000Z')
  const segments = offsetSegments(new Date('2024-03-01T00:00:00Z'), new Date('2024-11-01T00:00:00Z'), zone)
  assert.deepEqual(segments, [
    { until: Date.parse('2024-03-31T01:00:00Z'), offsetMs: 3_600_000 },
    { until: Date.parse('2024-10-27T01:00:00Z'), offsetMs: 7_200_000 },
    { until: null, offsetMs: 3_600_000 },
  ])
})
