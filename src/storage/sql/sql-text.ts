import { cleanText } from '../../domain/events/sanitise-json.ts'
import { validationError } from '../../shared/errors.ts'

/**
 * PostgreSQL's text and jsonb cannot hold U+0000, and jsonb refuses a lone surrogate escape: a write
 * carrying either fails as a whole. Person and group data (distinct ids, properties) come from
 * clients, so they are stored as PostHog's ingestion stores them: U+0000 and lone surrogates become
 * U+FFFD (posthog plugin-server `sanitizeJsonbValue` / `sanitizeString`). Reads apply the same
 * mapping, so a distinct id finds the person it was written as.
 */
export function toPgText(s: string): string {
  return cleanText(s) // capture's text rule: the one copy of it
}

// An escape in JSON text that PostgreSQL's jsonb refuses: \u0000, or a lone surrogate (a
// well-formed JSON.stringify escapes surrogates only when they are unpaired). Preceded by an even
// number of backslashes, so an escaped backslash followed by "u0000" is left alone.
const BAD_ESCAPE = /(?<=(?:^|[^\\])(?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/gi

/** JSON text of `value` that jsonb accepts: the same document with U+0000 and lone surrogates as U+FFFD. */
export function toPgJson(value: unknown): string {
  const text = JSON.stringify(value)
  return text.includes('\\u') ? text.replace(BAD_ESCAPE, '\\ufffd') : text
}

/** True when text holds U+0000: no stored text does, so a lookup by it finds nothing (and must not reach PostgreSQL, which fails on it). */
export const cannotBeStored = (s: string): boolean => s.includes('\u0000')

/**
 * Refuses, before PostgreSQL fails on it, a write whose text holds U+0000 anywhere (JSON keys
 * included): a 400 naming the field (`fields` is keyed by the field's wire name), not a 500.
 */
export function refuseNul(fields: Record<string, unknown>): void {
  for (const [attr, value] of Object.entries(fields)) {
    if (holdsNul(value)) throw validationError(attr, 'Text may not contain the NUL character (\\u0000).')
  }
}

function holdsNul(value: unknown): boolean {
  // Iterative: a deeply nested document must not overflow the stack here.
  const stack = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x)
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k.includes('\u0000')) return true
        stack.push(x)
      }
    }
  }
  return false
}
