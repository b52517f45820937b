import { createHash, randomBytes, randomUUID } from 'node:crypto'

/** A PostHog-style secret: prefix + 32 random bytes, url-safe base64 (as Python's token_urlsafe(32)). */
export function generateToken(prefix: 'phc_' | 'phx_'): string {
  return prefix + randomBytes(32).toString('base64url')
}

/** sha256 of a personal API key: how keys are stored (never in plain text). */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

/** The display mask PostHog shows for a key: first 4 and last 4 characters. */
export function maskSecret(secret: string): string {
  return `${secret.slice(0, 4)}...${secret.slice(-4)}`
}

export function newUuid(): string {
  return randomUUID()
}
