import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import test from 'node:test'
import { sha1First60Bits } from './sha1-bucket.ts'

const viaNode = (text: string) => parseInt(createHash('sha1').update(text).digest('hex').slice(0, 15), 16)

test('the first 60 bits of SHA-1 equal those of Node\'s digest for every length across block boundaries', () => {
  for (let n = 0; n <= 200; n++) {
    const text = Array.from({ length: n }, (_, i) => String.fromCharCode(33 + ((i * 7 + n) % 90))).join('')
    assert.equal(sha1First60Bits(text), viaNode(text), `length ${n}`)
  }
})

test('UTF-8 of non-ASCII identifiers (2, 3 and 4 bytes, lone surrogates) hashes as Node encodes it', () => {
  for (const text of ['flag.ünïcödé', 'flag.用户-42', 'flag.🚀🚀', 'flag.\ud800x', 'flag.x\udc00', 'flag.\ud83d', 'é'.repeat(100)]) {
    assert.equal(sha1First60Bits(text), viaNode(text), JSON.stringify(text))
  }
})

test('random flag keys and distinct ids hash as Node does', () => {
  for (let i = 0; i < 2000; i++) {
    const text = `flag-${Math.random().toString(36).slice(2)}.${crypto.randomUUID()}${i % 2 ? 'variant' : ''}`
    assert.equal(sha1First60Bits(text), viaNode(text), text)
  }
})
