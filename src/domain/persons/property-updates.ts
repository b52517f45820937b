/** The person-property operations one event carries. */
export interface PropertyUpdates {
  set: Record<string, unknown>
  setOnce: Record<string, unknown>
  unset: string[]
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * Reads `$set`, `$set_once` and `$unset` from event properties (top-level ones are already merged in by
 * capture). A `$set`/`$set_once` that is not an object is ignored (PostHog would iterate a string's
 * characters); `$unset` is a list of keys or an object whose keys are used; non-string keys are ignored.
 */
export function readPropertyUpdates(properties: Record<string, unknown>): PropertyUpdates {
  const set = isPlainObject(properties.$set) ? properties.$set : {}
  const setOnce = isPlainObject(properties.$set_once) ? properties.$set_once : {}
  const rawUnset = properties.$unset
  const keys = Array.isArray(rawUnset) ? rawUnset : isPlainObject(rawUnset) ? Object.keys(rawUnset) : []
  return { set, setOnce, unset: keys.filter((k): k is string => typeof k === 'string') }
}

/** Sets an own property even for keys like `__proto__` (plain assignment would change the prototype). */
export function defineProperty(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else target[key] = value // ~10x faster than defineProperty; safe for every other key
}

/** A shallow copy that keeps `__proto__`-named keys as own data properties. */
export function copyProperties(source: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(source)) defineProperty(out, key, source[key])
  return out
}

/**
 * Applies one event's updates in PostHog's order (`person-update.ts` `applyEventPropertyUpdates`):
 * `$set_once` only where the key is absent (a stored null counts as present), then `$set` where the
 * value differs (`!==`, so objects always count as a change), then `$unset` of present keys.
 * Mutates `properties`; answers whether anything changed (the caller bumps the version).
 */
export function applyPropertyUpdates(properties: Record<string, unknown>, updates: PropertyUpdates): boolean {
  let changed = false
  for (const key of Object.keys(updates.setOnce)) {
    if (Object.hasOwn(properties, key)) continue
    defineProperty(properties, key, updates.setOnce[key])
    changed = true
  }
  for (const key of Object.keys(updates.set)) {
    const value = updates.set[key]
    if (Object.hasOwn(properties, key) && properties[key] === value) continue
    defineProperty(properties, key, value)
    changed = true
  }
  for (const key of updates.unset) {
    if (!Object.hasOwn(properties, key)) continue
    delete properties[key]
    changed = true
  }
  return changed
}

/** Properties of a person created by an event: `{...$set_once, ...$set}` (PostHog's createPerson). */
export function initialProperties(updates: PropertyUpdates): Record<string, unknown> {
  const props: Record<string, unknown> = {}
  applyPropertyUpdates(props, { set: updates.set, setOnce: updates.setOnce, unset: [] })
  return props
}
