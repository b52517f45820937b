import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkTokenShape, extractEvents } from './extract-events.ts'
import { rejects } from '../../../test/helpers/assert-app-error.ts'

const ev = (extra: Record<string, unknown> = {}) => ({ event: 'e', distinct_id: 'u1', ...extra })


test('a batch object gives its events, api_key, sent_at and historical_migration', () => {
  const out = extractEvents({
    payload: { api_key: 'phc_a', batch: [ev(), ev()], sent_at: '2024-01-01T00:00:00.000Z', historical_migration: true },
  })
  assert.equal(out.token, 'phc_a')
  assert.equal(out.events.length, 2)
  assert.equal(out.sentAt?.toISOString(), '2024-01-01T00:00:00.000Z')
  assert.equal(out.historicalMigration, true)
})

test('a single event object is a batch of one, with its own token and sent_at', () => {
  const out = extractEvents({ payload: ev({ api_key: 'phc_b', sent_at: '2024-01-01T00:00:00Z' }) })
  assert.equal(out.token, 'phc_b')
  assert.equal(out.events.length, 1)
  assert.equal(out.sentAt?.toISOString(), '2024-01-01T00:00:00.000Z')
})

test('a bare array takes the token from its events (posthog-js recordings style)', () => {
  const out = extractEvents({ payload: [ev({ properties: { token: 'phc_c' } }), ev({ properties: { token: 'phc_c' } })] })
  assert.equal(out.token, 'phc_c')
  assert.equal(out.sentAt, null)
})

test('events in one array with different tokens are rejected (Rust MultipleTokens)', () => {
  rejects(() => extractEvents({ payload: [ev({ token: 'phc_1' }), ev({ token: 'phc_2' })] }), 'invalid_api_key', /inconsistent/)
})

test('a batch top-level token wins over the events’ own tokens', () => {
  const out = extractEvents({ payload: { token: 'phc_top', batch: [ev({ token: 'phc_other' })] } })
  assert.equal(out.token, 'phc_top')
})

test('$token, token, api_key, properties.token are read in that order', () => {
  const all = { $token: 'a', token: 'b', api_key: 'c', properties: { token: 'd' } }
  assert.equal(extractEvents({ payload: ev(all) }).token, 'a')
  assert.equal(extractEvents({ payload: ev({ ...all, $token: undefined }) }).token, 'b')
  assert.equal(extractEvents({ payload: ev({ api_key: 'c', properties: { token: 'd' } }) }).token, 'c')
  assert.equal(extractEvents({ payload: ev({ properties: { token: 'd' } }) }).token, 'd')
})

test('GET reads query token, then api_key, before the body', () => {
  const out = extractEvents({ payload: ev({ api_key: 'phc_body' }), query: { api_key: 'phc_q' }, method: 'GET' })
  assert.equal(out.token, 'phc_q')
})

test('POST falls back to the query token only when the body has none', () => {
  assert.equal(extractEvents({ payload: ev(), query: { token: 'phc_q' }, method: 'POST' }).token, 'phc_q')
  assert.equal(extractEvents({ payload: ev({ api_key: 'phc_b' }), query: { token: 'phc_q' } }).token, 'phc_b')
})

test('form api_key comes before the body token', () => {
  assert.equal(extractEvents({ payload: ev({ api_key: 'phc_b' }), form: { api_key: 'phc_f' } }).token, 'phc_f')
})

test('tokens are trimmed; blank or non-string tokens count as missing', () => {
  assert.equal(extractEvents({ payload: ev({ api_key: '  phc_x \n' }) }).token, 'phc_x')
  assert.equal(extractEvents({ payload: ev({ api_key: '   ' }) }).token, null)
  assert.equal(extractEvents({ payload: ev({ api_key: 42 }) }).token, null)
})

test('an empty array or batch is invalid_payload', () => {
  rejects(() => extractEvents({ payload: [] }), 'invalid_payload', /no event/)
  rejects(() => extractEvents({ payload: { api_key: 'k', batch: [] } }), 'invalid_payload', /no event/)
})

test('null, empty or non-object events are invalid_payload', () => {
  for (const bad of [null, {}, 'x', 3, [ev()]]) {
    rejects(() => extractEvents({ payload: [ev(), bad] }), 'invalid_payload', /some events are null/)
  }
})

test('a payload that is neither object nor array is invalid_payload', () => {
  for (const bad of [null, 'text', 12, true]) rejects(() => extractEvents({ payload: bad }), 'invalid_payload')
})

test('a non-array batch is invalid_payload', () => {
  rejects(() => extractEvents({ payload: { api_key: 'k', batch: ev() } }), 'invalid_payload', /batch/)
})

test('on /engage a nameless people update becomes $identify', () => {
  const engage = { $token: 'phc_e', $distinct_id: 'u9', $set: { plan: 'pro' } }
  const out = extractEvents({ payload: engage, isEngage: true })
  assert.equal(out.token, 'phc_e')
  assert.deepEqual(out.events[0], { ...engage, event: '$identify' })
  assert.equal((engage as Record<string, unknown>).event, undefined)
})

test('on /engage an event with a name keeps it', () => {
  assert.equal(extractEvents({ payload: ev({ event: 'x' }), isEngage: true }).events[0]!.event, 'x')
})

test('outside /engage a nameless object passes through (normalisation drops it)', () => {
  assert.equal(extractEvents({ payload: { distinct_id: 'u' } }).events[0]!.event, undefined)
})

test('query `_` gives sent_at when the body has none', () => {
  assert.equal(extractEvents({ payload: [ev()], query: { _: '1700000000123' } }).sentAt?.toISOString(), '2023-11-14T22:13:20.123Z')
})

test('an unreadable sent_at is ignored with a warning', () => {
  const out = extractEvents({ payload: { api_key: 'k', batch: [ev()], sent_at: 'yesterday' } })
  assert.equal(out.sentAt, null)
  assert.equal(out.warnings[0]?.type, 'ignored_invalid_timestamp')
})

test('checkTokenShape reports what PostHog reports', () => {
  assert.equal(checkTokenShape('phc_ok'), null)
  assert.equal(checkTokenShape(''), 'empty')
  assert.equal(checkTokenShape('x'.repeat(65)), 'too_long')
  assert.equal(checkTokenShape('phc_ü'), 'not_ascii')
  assert.equal(checkTokenShape('phc_\u0000'), 'null_byte')
  assert.equal(checkTokenShape('phx_personal'), 'personal_api_key')
})
