import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { parseEventTimestamp } from './parse-event-timestamp.ts'
import { parseSentAt } from './parse-sent-at.ts'

interface TimestampCase {
  now: string
  timestamp?: unknown
  sent_at?: string
  offset?: number
  ignore_sent_at?: boolean
}
type Golden = [string, TimestampCase, { timestamp: string; warnings: string[] }]

const cases = JSON.parse(
  readFileSync(new URL('../../../test/golden/events-timestamps.json', import.meta.url), 'utf8'),
) as Golden[]

for (const [name, input, expected] of cases) {
  test(`golden timestamp: ${name}`, () => {
    const sent = parseSentAt(input.sent_at, undefined)
    const result = parseEventTimestamp({
      timestamp: input.timestamp,
      offset: input.offset,
      sentAt: sent.sentAt,
      ignoreSentAt: input.ignore_sent_at === true,
      now: new Date(input.now),
    })
    const warnings = [...(sent.invalid !== null ? ['ignored_invalid_timestamp'] : []), ...result.warnings.map((w) => w.type)]
    assert.equal(result.timestamp.toISOString(), expected.timestamp)
    assert.deepEqual(warnings, expected.warnings)
  })
}

test('a non-string timestamp is ignored with a warning', () => {
  const now = new Date('2023-01-01T12:00:00Z')
  const result = parseEventTimestamp({ timestamp: 12345, sentAt: null, ignoreSentAt: false, now })
  assert.equal(result.timestamp.getTime(), now.getTime())
  assert.equal(result.warnings[0]?.type, 'ignored_invalid_timestamp')
})

test('a fractional offset is ignored, as Rust only reads integer offsets', () => {
  const now = new Date('2023-01-01T12:00:00Z')
  const result = parseEventTimestamp({ offset: 1.5, sentAt: null, ignoreSentAt: false, now })
  assert.equal(result.timestamp.toISOString(), '2023-01-01T12:00:00.000Z')
})

test('exactly 23 hours ahead is kept; one millisecond more is clamped', () => {
  const now = new Date('2023-01-01T00:00:00Z')
  const at = (ms: number) =>
    parseEventTimestamp({ timestamp: new Date(now.getTime() + ms).toISOString(), sentAt: null, ignoreSentAt: false, now })
  assert.equal(at(23 * 3600_000).timestamp.toISOString(), '2023-01-01T23:00:00.000Z')
  assert.equal(at(23 * 3600_000 + 1).timestamp.toISOString(), now.toISOString())
})

test('the future-event warning carries the inputs and the rejected result', () => {
  const now = new Date('2021-10-29T01:00:00.000Z')
  const { warnings } = parseEventTimestamp({ offset: -82860000, sentAt: null, ignoreSentAt: false, now })
  assert.deepEqual(warnings[0], {
    type: 'event_timestamp_in_future',
    details: { timestamp: '', sentAt: '', offset: -82860000, now: now.toISOString(), result: '2021-10-30T00:01:00.000Z' },
  })
})

test('sent_at as epoch milliseconds and seconds (query `_`)', () => {
  assert.equal(parseSentAt(undefined, '1700000000123').sentAt?.toISOString(), '2023-11-14T22:13:20.123Z')
  assert.equal(parseSentAt(undefined, '1700000000').sentAt?.toISOString(), '2023-11-14T22:13:20.000Z')
})

test('the body sent_at wins over query `_`', () => {
  const result = parseSentAt('2024-01-01T00:00:00.000Z', '1700000000123')
  assert.equal(result.sentAt?.toISOString(), '2024-01-01T00:00:00.000Z')
})

test('posthog-python sent_at with microseconds and +00:00 parses', () => {
  assert.equal(parseSentAt('2024-05-01T10:20:30.123456+00:00', undefined).sentAt?.toISOString(), '2024-05-01T10:20:30.123Z')
})
