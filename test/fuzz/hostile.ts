import fc from 'fast-check'
import { gzipSync } from 'node:zlib'
import type { TestApp } from '../helpers/test-app.ts'

/**
 * Shared pieces of the fuzz suite: a seed printed once per file (re-run with FUZZ_SEED=<n> to reproduce
 * a failure), a bounded number of runs (FUZZ_RUNS scales them), and a corpus of hostile values.
 */
export function fuzzSettings(file: string, runs: number): { seed: number; numRuns: number; includeErrorInReport: true } {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2_147_483_647
  const scale = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 1
  console.log(`# ${file}: FUZZ_SEED=${seed}`)
  return { seed, numRuns: Math.max(1, Math.round(runs * scale)), includeErrorInReport: true }
}

/** Raw JSON text spliced in place of this marker after JSON.stringify (deep nesting cannot be built as values). */
export const DEEP_MARKER = '\u0001deep\u0001'
export const deepArray = (n: number) => '['.repeat(n) + ']'.repeat(n)

/** Replaces `"<marker>"` in serialised JSON with 5,000-deep nesting. */
export function spliceDeep(json: string): string {
  return json.split(JSON.stringify(DEEP_MARKER)).join(deepArray(5000))
}

const HOSTILE_STRINGS = [
  '\ud800', 'a\udc00b', '\udbff\udbff', '\u0000', 'x\u0000y', '\u0000\ud800', '__proto__', 'constructor', 'prototype',
  'toString', '', ' ', '\t\n', '\u202e', '\u{1F600}', '\uFFFF', '\uFEFF', "'; DROP TABLE events; --", '%', '_', '\\',
  '"', '$.a', '$["a"]', 'a.b', '[0]', '(', '[', '*', '(a+)+$', '1e20', '-1', 'NaN', 'Infinity', '9999999999999999999999',
  '0x10', 'null', 'true', '2030', '1', 'Tue, 01 Jan 2030', '+275760-09-13T00:00:00.000Z', '0000-00-00', '2024-02-30',
  'phc_', 'phx_x', 'a'.repeat(70_000), '\u00e9'.repeat(300), DEEP_MARKER,
]

const HUGE_NUMBERS = [1e308, -1e308, 2 ** 53 + 2, -(2 ** 63), 2 ** 64, 1e20, 999999999999, 2 ** 31, -(2 ** 31) - 1, 0.1, -0, 5e-324]

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
)

export const hostileScalar: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom(...HUGE_NUMBERS) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false) },
)

/** Any JSON value with hostile leaves and keys, a few levels deep (deeper nesting comes from DEEP_MARKER). */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: hostileScalar },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.dictionary(hostileString, tie('value'), { maxKeys: 4 }) },
  ),
})).value

export const hostileObject: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(hostileString, hostileValue, { maxKeys: 5 })

/** A JSON value of the wrong type for almost any field. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(hostileValue, fc.constantFrom([], {}, [[]], [{}], { '': null }))

/** Serialises a body (JSON text with deep splices) and packs it the way an SDK or attacker might. */
export type Packing = 'json' | 'gzip' | 'gzip-truncated' | 'base64' | 'bad-base64' | 'lz64-garbage' | 'form' | 'invalid-utf8' | 'truncated-json'
export const packing: fc.Arbitrary<Packing> = fc.constantFrom(
  'json', 'json', 'json', 'gzip', 'gzip-truncated', 'base64', 'bad-base64', 'lz64-garbage', 'form', 'invalid-utf8', 'truncated-json',
)

export function pack(text: string, how: Packing): { payload: Buffer | string; headers: Record<string, string>; query: string } {
  const json = { 'content-type': 'application/json' }
  switch (how) {
    case 'json':
      return { payload: text, headers: json, query: '' }
    case 'gzip':
      return { payload: gzipSync(text), headers: { 'content-type': 'text/plain' }, query: '?compression=gzip-js' }
    case 'gzip-truncated': {
      const z = gzipSync(text)
      return { payload: z.subarray(0, Math.max(3, z.length >> 1)), headers: { 'content-type': 'text/plain' }, query: '?compression=gzip-js' }
    }
    case 'base64':
      return { payload: Buffer.from(text).toString('base64'), headers: { 'content-type': 'text/plain' }, query: '?compression=base64' }
    case 'bad-base64':
      return { payload: '%%%===' + Buffer.from(text).toString('base64').slice(3), headers: { 'content-type': 'text/plain' }, query: '?compression=base64' }
    case 'lz64-garbage':
      return { payload: 'N4Ig\u00ff' + text.slice(0, 50), headers: { 'content-type': 'text/plain' }, query: '?compression=lz64' }
    case 'form':
      return {
        payload: `data=${encodeURIComponent(Buffer.from(text).toString('base64'))}&compression=base64`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        query: '',
      }
    case 'invalid-utf8':
      return { payload: Buffer.concat([Buffer.from(text.slice(0, -1)), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from(text.slice(-1))]), headers: json, query: '' }
    case 'truncated-json':
      return { payload: text.slice(0, Math.max(1, text.length >> 1)), headers: json, query: '' }
  }
}

/** Throws unless the answer is below 500 (the property's one rule besides "the process is still up"). */
export function assertNo5xx(label: string, res: { statusCode: number; body: string }): void {
  if (res.statusCode >= 500) throw new Error(`${label} answered ${res.statusCode}: ${res.body.slice(0, 500)}`)
}

export async function assertHealthy(app: TestApp): Promise<void> {
  const res = await app.http.inject({ method: 'GET', url: '/_health' })
  if (res.statusCode !== 200) throw new Error(`/_health answered ${res.statusCode}: ${res.body}`)
}

/** A short label of a request for failure messages (long values cut). */
export function describe(x: unknown): string {
  const s = typeof x === 'string' ? x : JSON.stringify(x, (_k, v) => (typeof v === 'string' && v.length > 80 ? `${v.slice(0, 80)}...(${v.length})` : v))
  return (s ?? String(x)).slice(0, 600)
}

/** Percent-encodes every UTF-8 byte of `s` (a lone surrogate goes as U+FFFD's bytes: encodeURIComponent would throw). */
export function pct(s: string): string {
  return [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')
}

/** A query-string value: encoded hostile text, or raw escapes no UTF-8 decoder accepts (NUL, CESU surrogate, 0xFF, a bare %). */
export const hostileQueryValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: hostileString.map(pct) },
  { weight: 1, arbitrary: fc.constantFrom('%00', '%ED%A0%80', '%FF%FE', '%', '%zz', '%C3%28', 'a%00b', '%E2%82') },
)
