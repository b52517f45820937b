import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseUuid, uuidv7 } from './uuidv7.ts'

const zeros = (n: number) => new Uint8Array(n)
const ones = (n: number) => new Uint8Array(n).fill(0xff)

test('uuidv7 puts the milliseconds first, then version 7 and variant 10', () => {
  assert.equal(uuidv7(0x0190f3a27b1c, zeros), '0190f3a2-7b1c-7000-8000-000000000000')
  assert.equal(uuidv7(0x0190f3a27b1c, ones), '0190f3a2-7b1c-7fff-bfff-ffffffffffff')
})

test('uuidv7 ids sort by time', () => {
  const a = uuidv7(1_700_000_000_000, ones)
  const b = uuidv7(1_700_000_000_001, zeros)
  assert.ok(a < b)
})

test('parseUuid accepts hyphenated and simple forms, and rejects the rest', () => {
  assert.equal(parseUuid('0190F3A2-7B1C-7000-8000-00000000000A'), '0190f3a2-7b1c-7000-8000-00000000000a')
  assert.equal(parseUuid('0190f3a27b1c7000800000000000000a'), '0190f3a2-7b1c-7000-8000-00000000000a')
  for (const bad of ['', 'x', 42, null, '0190f3a2-7b1c-7000-8000-00000000000g', '{0190f3a2-7b1c-7000-8000-00000000000a}']) {
    assert.equal(parseUuid(bad), null)
  }
})
