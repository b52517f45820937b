import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'

/** PostHog's (Django's) minimum password length. */
export const MIN_PASSWORD_LENGTH = 8

// scrypt cost: N = 2^15, r = 8, p = 1 (32 MiB, ~0.1 s per hash; RFC 7914's interactive-login
// figure doubled). Stored with the hash, so it can be raised later without breaking old passwords.
const COST = { N: 1 << 15, r: 8, p: 1 }
const KEY_BYTES = 32

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  const opts: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r }
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, opts, (err, key) => (err ? reject(err) : resolve(key)))
  })
}

/** `scrypt$N$r$p$salt$hash` (base64url) with a fresh 16-byte salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, COST)
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

// Compared against when the user does not exist or has no password, so that the answer takes as
// long as for a wrong password (no telling registered e-mails apart by timing).
let dummyHash: Promise<string> | null = null

/** True when `password` matches `stored` (constant-time compare); a missing or malformed hash is false. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = stored?.split('$') ?? []
  if (parts.length !== 6 || parts[0] !== 'scrypt') {
    dummyHash ??= hashPassword('not a password')
    await verifyPassword(password, await dummyHash)
    return false
  }
  const [, n, r, p, salt, hash] = parts
  const expected = Buffer.from(hash, 'base64url')
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) })
  return key.length === expected.length && timingSafeEqual(key, expected)
}
