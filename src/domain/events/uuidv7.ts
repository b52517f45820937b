/** Source of random bytes, injected so the domain stays pure (node:crypto's `randomFillSync` in production). */
export type RandomBytes = (length: number) => Uint8Array

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then version 7, variant 10 and 74 random bits.
 * PostHog's Rust capture stamps server-generated event ids the same way.
 * Invariant: ids built from increasing `nowMs` sort in increasing order as strings.
 */
export function uuidv7(nowMs: number, randomBytes: RandomBytes): string {
  const b = new Uint8Array(16)
  b.set(randomBytes(10).subarray(0, 10), 6)
  let ms = Math.max(0, Math.floor(nowMs))
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256
    ms = Math.floor(ms / 256)
  }
  b[6] = 0x70 | (b[6]! & 0x0f)
  b[8] = 0x80 | (b[8]! & 0x3f)
  return formatUuid(b)
}

function formatUuid(b: Uint8Array): string {
  let s = ''
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += '-'
    s += HEX[b[i]!]
  }
  return s
}

const HYPHENATED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const SIMPLE = /^[0-9a-f]{32}$/i

/**
 * The canonical (lower-case, hyphenated) form of a client-supplied UUID, or null when it is not one.
 * Accepts the hyphenated and the 32-hex "simple" forms, any version, as Rust's `Uuid` parser does
 * for the forms SDKs actually send.
 */
export function parseUuid(value: unknown): string | null {
  if (typeof value !== 'string') return null
  if (value.length === 36 && HYPHENATED.test(value)) return value.toLowerCase()
  if (value.length === 32 && SIMPLE.test(value)) {
    const v = value.toLowerCase()
    return `${v.slice(0, 8)}-${v.slice(8, 12)}-${v.slice(12, 16)}-${v.slice(16, 20)}-${v.slice(20)}`
  }
  return null
}
