// The first 60 bits of SHA-1 (FIPS 180-4) of a string's UTF-8 bytes, as PostHog's bucketing reads
// them (15 hex digits), computed in JS on 32-bit words. Profiled on /decide with 50 flags: Node's
// one-shot `crypto.hash` spent more time crossing into C++, building the hex string and parsing 15
// of its digits back with parseInt than hashing; this returns the number directly, with no string
// or Buffer per call.

const W = new Int32Array(80)
let bytes = new Uint8Array(256)

/** UTF-8 of `text` into the shared buffer from `at`; returns the end. */
function encode(text: string, at: number): number {
  const n = text.length
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i)
    if (c < 0x80) bytes[at++] = c
    else if (c < 0x800) {
      bytes[at++] = 0xc0 | (c >> 6)
      bytes[at++] = 0x80 | (c & 63)
    } else {
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const d = text.charCodeAt(i + 1)
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00)
          i++
          bytes[at++] = 0xf0 | (c >> 18)
          bytes[at++] = 0x80 | ((c >> 12) & 63)
          bytes[at++] = 0x80 | ((c >> 6) & 63)
          bytes[at++] = 0x80 | (c & 63)
          continue
        }
      }
      // A lone surrogate becomes U+FFFD, as Buffer.from / TextEncoder write it.
      if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd
      bytes[at++] = 0xe0 | (c >> 12)
      bytes[at++] = 0x80 | ((c >> 6) & 63)
      bytes[at++] = 0x80 | (c & 63)
    }
  }
  return at
}

/**
 * SHA-1 of the UTF-8 bytes of `a + b + c`, returning its first 60 bits as an integer-valued double
 * (`parseInt(hex.slice(0, 15), 16)` of the hex digest, rounded the same way). The parts are encoded
 * one after the other, never concatenated.
 */
export function sha1First60Bits(a: string, b = '', c = ''): number {
  const room = (a.length + b.length + c.length) * 3 + 72
  if (bytes.length < room) bytes = new Uint8Array(room)
  const length = encode(c, encode(b, encode(a, 0)))
  // Padding: 0x80, zeros, then the bit length as a 64-bit big-endian integer.
  const blocks = ((length + 8) >> 6) + 1
  const total = blocks * 64
  bytes[length] = 0x80
  for (let i = length + 1; i < total; i++) bytes[i] = 0
  const bits = length * 8
  bytes[total - 4] = bits >>> 24
  bytes[total - 3] = (bits >>> 16) & 255
  bytes[total - 2] = (bits >>> 8) & 255
  bytes[total - 1] = bits & 255
  bytes[total - 5] = Math.floor(bits / 0x100000000) & 255

  return digest60(total)
}

/** Compresses the padded message of `total` bytes in the shared buffer; the first 60 bits. */
function digest60(total: number): number {
  const w = W
  const m = bytes
  let h0 = 0x67452301
  let h1 = 0xefcdab89 | 0
  let h2 = 0x98badcfe | 0
  let h3 = 0x10325476
  let h4 = 0xc3d2e1f0 | 0
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) {
      const j = off + i * 4
      w[i] = (m[j] << 24) | (m[j + 1] << 16) | (m[j + 2] << 8) | m[j + 3]
    }
    for (let i = 16; i < 80; i++) {
      const x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
      w[i] = (x << 1) | (x >>> 31)
    }
    let a = h0
    let b = h1
    let c = h2
    let d = h3
    let e = h4
    // The four rounds of 20 steps, each its own loop (no per-step branch).
    for (let i = 0; i < 20; i++) {
      const t = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + 0x5a827999 + w[i]) | 0
      e = d
      d = c
      c = (b << 30) | (b >>> 2)
      b = a
      a = t
    }
    for (let i = 20; i < 40; i++) {
      const t = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0x6ed9eba1 + w[i]) | 0
      e = d
      d = c
      c = (b << 30) | (b >>> 2)
      b = a
      a = t
    }
    for (let i = 40; i < 60; i++) {
      const t = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e - 0x70e44324 + w[i]) | 0
      e = d
      d = c
      c = (b << 30) | (b >>> 2)
      b = a
      a = t
    }
    for (let i = 60; i < 80; i++) {
      const t = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e - 0x359d3e2a + w[i]) | 0
      e = d
      d = c
      c = (b << 30) | (b >>> 2)
      b = a
      a = t
    }
    h0 = (h0 + a) | 0
    h1 = (h1 + b) | 0
    h2 = (h2 + c) | 0
    h3 = (h3 + d) | 0
    h4 = (h4 + e) | 0
  }
  // 32 bits of h0 and the top 28 of h1: the sum rounds once, as parseInt of the 15 digits does.
  return (h0 >>> 0) * 268435456 + (h1 >>> 4)
}
