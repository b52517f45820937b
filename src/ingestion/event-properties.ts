import type { StoredEvent } from './event-store.ts'

/** The properties of a StoredEvent parsed, with the text they were parsed from. */
export interface ParsedProperties {
  readonly text: string
  readonly value: Record<string, unknown>
}

/**
 * The event's properties as an object, parsed once per micro-batch: the first step that asks parses
 * `e.properties` and keeps the object on the event (`e.parsed`); later steps get that object while
 * the text is still the one it came from (a step that rewrites the text hands on the new object
 * with it, or the next reader parses again). The text is what is stored; the object is read-only
 * for every step (copy before changing). Throws on text that is not a JSON object.
 */
export function propertiesOf(e: StoredEvent): Record<string, unknown> {
  const cached = e.parsed
  // Same string object in the common case: === answers on the pointer without comparing text.
  if (cached !== undefined && cached.text === e.properties) return cached.value
  const value: unknown = JSON.parse(e.properties)
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('event properties are not a JSON object')
  e.parsed = { text: e.properties, value: value as Record<string, unknown> }
  return value as Record<string, unknown>
}
