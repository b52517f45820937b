import assert from 'node:assert/strict'
import { test } from 'node:test'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { decodeCaptureBody } from './decode-capture-body.ts'
import { rejects } from '../../../test/helpers/assert-app-error.ts'

const event = { event: '$pageview', distinct_id: 'u1', properties: { $current_url: 'https://x.test/ä?q=1', n: 1 } }
const batch = { api_key: 'phc_test', batch: [event], sent_at: '2024-01-01T00:00:00.000Z' }
const json = (v: unknown) => Buffer.from(JSON.stringify(v))


test('posthog-node: gzip JSON batch announced by Content-Encoding', () => {
  const body = gzipSync(json(batch))
  const out = decodeCaptureBody({ body, contentType: 'application/json', contentEncoding: 'gzip', method: 'POST' })
  assert.deepEqual(out.payload, batch)
})

test('posthog-python: plain JSON batch', () => {
  const out = decodeCaptureBody({ body: json(batch), contentType: 'application/json', method: 'POST' })
  assert.deepEqual(out.payload, batch)
})

test('posthog-js 1.449: gzip bytes as text/plain with no hint are sniffed by magic bytes', () => {
  const out = decodeCaptureBody({ body: gzipSync(json(batch)), contentType: 'text/plain', method: 'POST' })
  assert.deepEqual(out.payload, batch)
})

test('older posthog-js: ?compression=gzip-js with a gzip body', () => {
  const query = { compression: 'gzip-js', ver: '1.200.0', _: '1700000000000' }
  const out = decodeCaptureBody({ body: gzipSync(json([event])), contentType: 'text/plain', query, method: 'POST' })
  assert.deepEqual(out.payload, [event])
})

test('old posthog-js: ?compression=lz64 form body', () => {
  const packed = LZString.compressToBase64(JSON.stringify(batch))
  const body = Buffer.from(`data=${encodeURIComponent(packed)}`)
  const out = decodeCaptureBody({
    body,
    contentType: 'application/x-www-form-urlencoded',
    query: { compression: 'lz64' },
    method: 'POST',
  })
  assert.deepEqual(out.payload, batch)
})

test('lz64 survives URL-decoding that turned + into spaces', () => {
  let i = 0
  let payload = { ...event, properties: { i } }
  while (!LZString.compressToBase64(JSON.stringify(payload)).includes('+')) payload = { ...event, properties: { i: ++i } }
  const packed = LZString.compressToBase64(JSON.stringify(payload))
  const body = Buffer.from(`data=${packed}`) // not percent-encoded: '+' reads back as ' '
  const out = decodeCaptureBody({ body, contentType: 'application/x-www-form-urlencoded', query: { compression: 'lz64' } })
  assert.deepEqual(out.payload, payload)
})

test('posthog-js sendBeacon: base64 form body with ?compression=base64', () => {
  const b64 = Buffer.from(JSON.stringify(batch)).toString('base64')
  const body = Buffer.from(`data=${encodeURIComponent(b64)}`)
  const out = decodeCaptureBody({ body, contentType: 'application/x-www-form-urlencoded', query: { compression: 'base64' } })
  assert.deepEqual(out.payload, batch)
})

test('base64 form body without a compression hint is still decoded', () => {
  const b64 = Buffer.from(JSON.stringify([event])).toString('base64')
  const out = decodeCaptureBody({ body: Buffer.from(`data=${encodeURIComponent(b64)}`), contentType: 'application/x-www-form-urlencoded' })
  assert.deepEqual(out.payload, [event])
})

test('form body with plain JSON in data= and extra fields', () => {
  const body = Buffer.from(`data=${encodeURIComponent(JSON.stringify(event))}&api_key=phc_form&ver=1.0`)
  const out = decodeCaptureBody({ body, contentType: 'application/x-www-form-urlencoded; charset=UTF-8' })
  assert.deepEqual(out.payload, event)
  assert.deepEqual(out.form, { api_key: 'phc_form', ver: '1.0' })
})

test('a data= body sent as text/plain is read as a form (Django)', () => {
  const b64 = Buffer.from(JSON.stringify(event)).toString('base64')
  const out = decodeCaptureBody({ body: Buffer.from(`data=${encodeURIComponent(b64)}`), contentType: 'text/plain' })
  assert.deepEqual(out.payload, event)
})

test('a raw base64 body is decoded (mobile and legacy /e/ clients)', () => {
  const body = Buffer.from(Buffer.from(JSON.stringify(batch)).toString('base64'))
  assert.deepEqual(decodeCaptureBody({ body, contentType: 'text/plain' }).payload, batch)
})

test('GET with ?data= base64 (query already URL-decoded, + became space)', () => {
  const b64 = Buffer.from(JSON.stringify({ ...event, properties: { k: '>>>???' } })).toString('base64')
  const out = decodeCaptureBody({ method: 'GET', query: { data: b64.replace(/\+/g, ' '), ip: '1' } })
  assert.deepEqual(out.payload, { ...event, properties: { k: '>>>???' } })
})

test('GET with ?data= plain JSON', () => {
  assert.deepEqual(decodeCaptureBody({ method: 'GET', query: { data: JSON.stringify(event) } }).payload, event)
})

test('base64 of gzip with ?compression=gzip in a GET', () => {
  const b64 = gzipSync(json(event)).toString('base64')
  assert.deepEqual(decodeCaptureBody({ method: 'GET', query: { data: b64, compression: 'gzip' } }).payload, event)
})

test('compression names are case-insensitive in the query', () => {
  const out = decodeCaptureBody({ body: gzipSync(json(event)), query: { compression: 'GZIP-JS' } })
  assert.deepEqual(out.payload, event)
})

test('an unknown compression value is treated as none', () => {
  assert.deepEqual(decodeCaptureBody({ body: json(event), query: { compression: 'zstd-ish' } }).payload, event)
})

test('NaN and Infinity from Python json read as null', () => {
  const body = Buffer.from('{"event":"e","distinct_id":"NaN","properties":{"a":NaN,"b":-Infinity,"c":"Infinity"}}')
  assert.deepEqual(decodeCaptureBody({ body }).payload, {
    event: 'e',
    distinct_id: 'NaN',
    properties: { a: null, b: null, c: 'Infinity' },
  })
})

test('an empty body is rejected with the no-data message', () => {
  rejects(() => decodeCaptureBody({ body: Buffer.alloc(0), method: 'POST' }), 'invalid_payload', /No data found/)
})

test('malformed JSON is invalid_payload', () => {
  rejects(() => decodeCaptureBody({ body: Buffer.from('{"event": ') }), 'invalid_payload', /^Malformed request data: Invalid JSON/)
})

test('a gzip hint on a body that is not gzip is invalid_payload', () => {
  rejects(() => decodeCaptureBody({ body: Buffer.from('undefined'), query: { compression: 'gzip-js' } }), 'invalid_payload', /gzip/)
})

test('a corrupt gzip stream is invalid_payload', () => {
  const body = gzipSync(json(batch)).subarray(0, 20)
  rejects(() => decodeCaptureBody({ body }), 'invalid_payload')
})

test('undecodable lz64 is invalid_payload', () => {
  rejects(() => decodeCaptureBody({ body: Buffer.from('data=%21%21'), query: { compression: 'lz64' } }), 'invalid_payload', /decompress/)
})

test('a gzip bomb is rejected as payload_too_large', () => {
  const bomb = gzipSync(Buffer.alloc(5 * 1024 * 1024, 0x20))
  rejects(() => decodeCaptureBody({ body: bomb, maxBytes: 1024 * 1024 }), 'payload_too_large')
})

test('an lz64 bomb is rejected as payload_too_large', () => {
  const packed = LZString.compressToBase64(JSON.stringify({ s: 'a'.repeat(200_000) }))
  rejects(() => decodeCaptureBody({ body: Buffer.from(packed), query: { compression: 'lz64' }, maxBytes: 10_000 }), 'payload_too_large')
})

test('an uncompressed body over maxBytes is payload_too_large', () => {
  rejects(() => decodeCaptureBody({ body: json({ s: 'x'.repeat(2000) }), maxBytes: 1000 }), 'payload_too_large')
})

test('invalid UTF-8 is invalid_payload', () => {
  rejects(() => decodeCaptureBody({ body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) }), 'invalid_payload', /UTF-8/)
})

test('a form body without data is invalid_payload', () => {
  rejects(() => decodeCaptureBody({ body: Buffer.from('ver=1'), contentType: 'application/x-www-form-urlencoded' }), 'invalid_payload')
})

test('a base64-looking word that is not base64 JSON is left alone and fails as JSON', () => {
  rejects(() => decodeCaptureBody({ body: Buffer.from('hello') }), 'invalid_payload', /Invalid JSON/)
})
