/**
 * String forms of JSON values used by PostHog's property operators (Rust
 * `to_string_representation`): strings are taken raw, everything else as JSON text. Object
 * keys are sorted (serde_json's default map) so equal objects compare equal.
 */
export function toPropertyString(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null'
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (value === null || value === undefined) return 'null'
  return stableJson(value)
}

function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return typeof value === 'string' ? JSON.stringify(value) : toPropertyString(value)
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(record[k])}`).join(',')}}`
}

const ASCII_UPPER = /[A-Z]/
const ASCII_UPPER_ALL = /[A-Z]/g

/** Lower-cases ASCII letters only, like Rust's `to_ascii_lowercase` (used by contains/starts/ends). */
export function asciiLowercase(text: string): string {
  return ASCII_UPPER.test(text) ? text.replace(ASCII_UPPER_ALL, (c) => String.fromCharCode(c.charCodeAt(0) + 32)) : text
}

/** PostHog's boolean-like filter values: booleans, "true"/"false" in any case, or lists of those. */
export function isTruthyOrFalsy(value: unknown): boolean {
  if (typeof value === 'boolean') return true
  if (typeof value === 'string') {
    const lower = value.toLowerCase()
    return lower === 'true' || lower === 'false'
  }
  return Array.isArray(value) && value.every(isTruthyOrFalsy)
}

/** Truthiness as PostHog's `is_truthy_property_value`: true, "true" (any case), or a list of those. */
export function isTruthy(value: unknown): boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'string') return value.toLowerCase() === 'true'
  return Array.isArray(value) && value.every(isTruthy)
}
