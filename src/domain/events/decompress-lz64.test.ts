import assert from 'node:assert/strict'
import { test } from 'node:test'
import LZString from 'lz-string'
import { AppError } from '../../shared/errors.ts'
import { decompressLz64 } from './decompress-lz64.ts'

test('decompressLz64 inverts lz-string compressToBase64', () => {
  const samples = [
    'a',
    'hello world',
    JSON.stringify({ event: '$pageview', properties: { s: 'ü€😀', list: [1, 2, 3] } }),
    'x'.repeat(50_000),
    Array.from({ length: 3000 }, (_, i) => String.fromCharCode((i * 7919) % 65536)).join(''),
  ]
  for (const s of samples) assert.equal(decompressLz64(LZString.compressToBase64(s), 1e9), s)
})

test('decompressLz64 answers null for garbage and empty input', () => {
  assert.equal(decompressLz64('', 1e9), null)
  assert.equal(decompressLz64('!!!!', 1e9), null)
})

test('decompressLz64 stops past maxChars', () => {
  assert.throws(
    () => decompressLz64(LZString.compressToBase64('y'.repeat(100_000)), 1000),
    (err: unknown) => err instanceof AppError && err.code === 'payload_too_large',
  )
})
