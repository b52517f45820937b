import type { StoredEvent } from './event-store.ts'
import { propertiesOf } from './event-properties.ts'

/**
 * What the ingestion steps read of an event's properties travels beside their JSON text, so that the
 * worker does not parse the text of every event (capture already parsed it once):
 * - the step properties: the keys the persons, groups and GeoIP steps read, copied with their values
 *   (`$set`, `$set_once`, `$unset`, `$process_person_profile`, `alias`, `$anon_distinct_id`,
 *   `$groups`, every `$group_*` and `$geoip_*`, `$ip`). For any such key, the step properties have it
 *   exactly when the properties have it, with the same value: a step asks them, not the text.
 * - the shape: a 52-bit hash of the top-level keys, in order, each with the JSON type of its value
 *   (string, number, boolean, other). The definitions step records the definitions of an event only
 *   when the shape is new to it for the project and event name (see definitions-step.ts).
 *
 * A step that changes the properties keeps both true for the new text (`withAddedProperties`, or its
 * own code that updates them). A message of the previous format has neither: its steps read the
 * parsed properties, which are a superset of the step properties (`stepPropertiesOf`).
 */
export interface PropertiesSummary {
  stepProperties: Record<string, unknown>
  shape: number
}

const STEP_KEYS = new Set(['$set', '$set_once', '$unset', '$process_person_profile', '$anon_distinct_id', '$groups', '$ip'])

/** Whether the steps read `key` (so the step properties carry it). */
export function isStepKey(key: string): boolean {
  if (key.charCodeAt(0) !== 0x24 /* $ */) return key === 'alias'
  return STEP_KEYS.has(key) || key.startsWith('$group_') || key.startsWith('$geoip_')
}

// Two FNV-1a lanes with different primes and seeds, joined into 52 bits (the shapes of one event
// name in one project are tens to thousands: a collision would hide one shape's new keys for an hour).
const P1 = 0x01000193
const P2 = 0x0100019d
const SEED1 = 0x811c9dc5 | 0
const SEED2 = 0x050c5d1f

/** A key's two hash lanes and whether the steps read it, computed once per distinct key (see keyInfo). */
interface KeyInfo { readonly h1: number; readonly h2: number; readonly isStep: boolean }

/**
 * Keys seen, up to MAX_KEYS (then forgotten all at once: a client inventing keys costs the char
 * loop, never memory). JSON.parse internalises property names, so a look-up costs no hashing of
 * the text: profiled, hashing every key's characters per event cost 60 % of parsing the event.
 */
const keys = new Map<string, KeyInfo>()
const MAX_KEYS = 50_000

function keyInfo(key: string): KeyInfo {
  let info = keys.get(key)
  if (info !== undefined) return info
  let h1 = SEED1
  let h2 = SEED2
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, P1)
    h2 = Math.imul(h2 ^ c, P2)
  }
  info = { h1, h2, isStep: isStepKey(key) }
  if (keys.size >= MAX_KEYS) keys.clear()
  keys.set(key, info)
  return info
}

/** One pass over the properties: their step properties and their shape. */
export function summariseProperties(properties: Record<string, unknown>): PropertiesSummary {
  const stepProperties: Record<string, unknown> = {}
  let h1 = SEED1
  let h2 = SEED2
  for (const key in properties) {
    const value = properties[key]
    const info = keyInfo(key)
    // Order matters (a key's place in the shape), and the type goes with its key.
    const t = typeClass(value)
    h1 = Math.imul(h1 ^ info.h1, P1) + t
    h2 = Math.imul(h2 ^ info.h2, P2) + t
    if (info.isStep) defineOwn(stepProperties, key, value)
  }
  return { stepProperties, shape: join(h1, h2) }
}

function pickStepProperties(properties: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key in properties) if (isStepKey(key)) defineOwn(out, key, properties[key])
  return out
}

/**
 * The shape of properties made by a change named `change` (deterministic: the same change of the
 * same shape always makes the same keys and types) from properties of shape `shape`.
 */
export function mixShape(shape: number, change: string): number {
  let h1 = SEED1 ^ (shape % 0x100000000)
  let h2 = SEED2 ^ Math.floor(shape / 0x100000000)
  h1 = Math.imul(h1, P1)
  h2 = Math.imul(h2, P2)
  for (let i = 0; i < change.length; i++) {
    const c = change.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, P1)
    h2 = Math.imul(h2 ^ c, P2)
  }
  return join(h1, h2)
}

function join(h1: number, h2: number): number {
  return (h1 >>> 0) * 0x100000 + (h2 >>> 12)
}

function typeClass(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return 1
    case 'number':
      return 2
    case 'boolean':
      return 3
    default:
      return 0
  }
}

/** An own data property even for `__proto__` (assignment would set the prototype). */
function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else target[key] = value
}

/**
 * What a step reads of the event's properties: the step properties when the message carried them,
 * else (a message of the previous format) all the properties, parsed once per batch. Read-only.
 * Throws as `propertiesOf` does on text that is not a JSON object (only when it has to parse).
 */
export function stepPropertiesOf(e: StoredEvent): Record<string, unknown> {
  return e.stepProperties ?? propertiesOf(e)
}

/**
 * The event with `added` appended to its properties, none of whose keys it has (the caller checked
 * with `stepPropertiesOf`: they are step keys), without parsing: the text gets the JSON of `added`
 * spliced before its closing brace; the step properties get `added`; the shape is mixed with
 * `change` (which must name the keys added and their types); a parsed object at hand is extended.
 */
export function withAddedProperties(e: StoredEvent, added: Record<string, unknown>, change: string): StoredEvent {
  const json = JSON.stringify(added)
  const body = e.properties.slice(0, e.properties.lastIndexOf('}')).trimEnd()
  const properties = body.endsWith('{') ? `${body}${json.slice(1)}` : `${body},${json.slice(1)}`
  const parsed = e.parsed !== undefined && e.parsed.text === e.properties ? { text: properties, value: { ...e.parsed.value, ...added } } : undefined
  return {
    ...e,
    properties,
    parsed,
    stepProperties: e.stepProperties === undefined ? undefined : { ...e.stepProperties, ...added },
    shape: e.shape === undefined ? undefined : mixShape(e.shape, change),
  }
}

/**
 * The event with properties rebuilt as `value` (parsed and changed by the caller), serialised; its
 * step properties and shape follow (`change` names the change as for `withAddedProperties`).
 */
export function withRewrittenProperties(e: StoredEvent, value: Record<string, unknown>, change: string): StoredEvent {
  const properties = JSON.stringify(value)
  return {
    ...e,
    properties,
    parsed: { text: properties, value },
    stepProperties: e.stepProperties === undefined ? undefined : pickStepProperties(value),
    shape: e.shape === undefined ? undefined : mixShape(e.shape, change),
  }
}
