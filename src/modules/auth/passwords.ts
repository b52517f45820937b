import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { AppError } from '../../shared/errors.ts'

/** PostHog's (Django's) minimum password length. */
export const MIN_PASSWORD_LENGTH = 8

// scrypt cost: N = 2^15, r = 8, p = 1 (32 MiB; RFC 7914's interactive-login figure doubled; 0.26 s
// per verify measured on the shared, busy 2-core test machine). Stored with the hash, so it can be
// raised later without breaking old passwords.
const COST = { N: 1 << 15, r: 8, p: 1 }
const KEY_BYTES = 32

// scrypt runs on libuv's thread pool (4 threads by default), which the event queue's file writes
// share: at most 2 hashes run at once, so a burst of sign-ins from many addresses cannot stall
// ingestion; past 100 waiting, a sign-in is refused as throttled instead of queued.
const MAX_RUNNING = 2
const MAX_WAITING = 100
let running = 0
const waiting: Array<() => void> = []

function acquire(): Promise<void> {
  if (running < MAX_RUNNING) {
    running++
    return Promise.resolve()
  }
  if (waiting.length >= MAX_WAITING) {
    return Promise.reject(new AppError('throttled', 'Too many sign-ins at once; try again in a second.', null, { retryAfterSeconds: 1 }))
  }
  return new Promise((resolve) => waiting.push(resolve))
}

function release(): void {
  const next = waiting.shift()
  if (next) next() // the slot passes straight to the next waiter
  else running--
}

async function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  const opts: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r }
  await acquire()
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      scrypt(password.normalize('NFKC'), salt, KEY_BYTES, opts, (err, key) => (err ? reject(err) : resolve(key)))
    })
  } finally {
    release()
  }
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
