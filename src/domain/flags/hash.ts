import crypto from 'node:crypto'

// 0xFFFFFFFFFFFFFFF (2^60 - 1) rounds to exactly 2^60 as a double, as in PostHog's Python
// (`float(LONG_SCALE)`), Rust (`as f64`) and posthog-node. Keep the literal: changing its
// rounding would move every user to a different bucket.
// eslint-disable-next-line no-loss-of-precision
const LONG_SCALE = 0xfffffffffffffff

// `crypto.hash` (Node >= 20.12) is a one-shot digest without a Hash object; measured at
// ~400 ns per call against ~880 ns for createHash().update().digest() and ~450 ns for a
// hand-written JS SHA-1 on 30-byte keys (bench/flag-engine.ts has the whole engine).
type HashOnce = (algorithm: string, data: string) => string
const hashOnce: HashOnce | undefined = (crypto as unknown as { hash?: HashOnce }).hash

function sha1Hex(text: string): string {
  if (hashOnce !== undefined) return hashOnce('sha1', text)
  return crypto.createHash('sha1').update(text).digest('hex')
}

/**
 * PostHog's bucketing hash: the first 15 hex digits of `sha1(prefix + identifier + salt)` read
 * as an integer and divided by 0xFFFFFFFFFFFFFFF, giving a number in [0, 1].
 * Mirrors `calculate_hash` in rust/feature-flags/src/flags/flag_matching_utils.rs.
 */
export function calculateHash(prefix: string, identifier: string, salt = ''): number {
  return parseInt(sha1Hex(prefix + identifier + salt).slice(0, 15), 16) / LONG_SCALE
}

/**
 * Rollout (salt `""`) or variant (salt `"variant"`) hash of a flag for one identifier:
 * `sha1("<flagKey>.<identifier><salt>")`. An empty identifier hashes to 0, as in PostHog's
 * Rust service (`get_hash`), so such a user lands in the first bucket.
 */
export function hashFlag(flagKey: string, identifier: string, salt = ''): number {
  if (identifier === '') return 0
  return calculateHash(flagKey + '.', identifier, salt)
}

/** Holdout hash: `sha1("holdout-<identifier>")`; the flag key is deliberately not part of it. */
export function hashHoldout(identifier: string): number {
  return calculateHash('holdout-', identifier)
}
