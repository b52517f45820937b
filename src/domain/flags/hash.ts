import { sha1First60Bits } from './sha1-bucket.ts'

// 0xFFFFFFFFFFFFFFF (2^60 - 1) rounds to exactly 2^60 as a double, as in PostHog's Python
// (`float(LONG_SCALE)`), Rust (`as f64`) and posthog-node. Keep the literal: changing its
// rounding would move every user to a different bucket.
// eslint-disable-next-line no-loss-of-precision
const LONG_SCALE = 0xfffffffffffffff

/**
 * PostHog's bucketing hash: the first 15 hex digits of `sha1(prefix + identifier + salt)` read
 * as an integer and divided by 0xFFFFFFFFFFFFFFF, giving a number in [0, 1].
 * Mirrors `calculate_hash` in rust/feature-flags/src/flags/flag_matching_utils.rs.
 */
export function calculateHash(prefix: string, identifier: string, salt = ''): number {
  return sha1First60Bits(prefix, identifier, salt) / LONG_SCALE
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
