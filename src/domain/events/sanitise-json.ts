/**
 * PostHog's Rust capture parses bodies with serde_json, whose recursion limit is 128: a deeper body
 * is refused with a 400. Tally refuses the same depth (arrays and objects each count one level).
 */
export const MAX_JSON_DEPTH = 128

type WellFormedString = string & { isWellFormed(): boolean; toWellFormed(): string }

/**
 * Tally's one text rule, applied once when a capture or decide body is decoded, before anything is
 * queued or stored: a lone UTF-16 surrogate becomes U+FFFD (what `toWellFormed()` does) and so does
 * U+0000 (PostgreSQL text cannot hold it). Every string is fixed: event names, distinct ids, property
 * keys and values, at any depth. So whatever capture accepts serialises to valid UTF-8 JSON that
 * DuckDB, PostgreSQL and PGlite all read back.
 */
export function cleanText(s: string): string {
  let out = s
  if (!(out as WellFormedString).isWellFormed()) out = (out as WellFormedString).toWellFormed()
  if (out.indexOf('\u0000') !== -1) out = out.replaceAll('\u0000', '\uFFFD')
  return out
}

function needsCleaningText(s: string): boolean {
  return !(s as WellFormedString).isWellFormed() || s.indexOf('\u0000') !== -1
}

/**
 * Walks a freshly parsed JSON value without recursion (so depth cannot overflow the stack), cleans
 * every string and key in place with `cleanText`, and measures the depth. Returns the value (a new
 * string when the top value is itself a string) or `null` when it is nested deeper than `maxDepth`.
 * Clean values are never copied: the only cost is one `isWellFormed`/`indexOf` per string.
 * Only for values this process just parsed (it mutates them). `clean: false` only measures the depth
 * (recordings: posthog-js packs gzip bytes as latin1 text, U+0000 included, and they go to files).
 */
export function sanitiseParsedJson(value: unknown, maxDepth = MAX_JSON_DEPTH, clean = true): { value: unknown } | null {
  const needsCleaning = clean ? needsCleaningText : () => false
  if (typeof value === 'string') return { value: needsCleaning(value) ? cleanText(value) : value }
  if (typeof value !== 'object' || value === null) return { value }
  const stack: Array<{ node: object; depth: number }> = [{ node: value, depth: 1 }]
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!
    if (depth > maxDepth) return null
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i]
        if (typeof item === 'string') {
          if (needsCleaning(item)) node[i] = cleanText(item)
        } else if (typeof item === 'object' && item !== null) {
          stack.push({ node: item, depth: depth + 1 })
        }
      }
      continue
    }
    const obj = node as Record<string, unknown>
    let badKey = false
    for (const key in obj) {
      const item = obj[key]
      if (needsCleaning(key)) badKey = true
      if (typeof item === 'string') {
        if (needsCleaning(item)) setOwn(obj, key, cleanText(item))
      } else if (typeof item === 'object' && item !== null) {
        stack.push({ node: item, depth: depth + 1 })
      }
    }
    if (badKey) renameKeys(obj)
  }
  return { value }
}

/** Re-inserts every key in order with its cleaned name (the first value wins when two keys collide). */
function renameKeys(obj: Record<string, unknown>): void {
  const entries = Object.entries(obj)
  for (const [key] of entries) delete obj[key]
  for (const [key, item] of entries) {
    const clean = needsCleaningText(key) ? cleanText(key) : key
    if (!Object.prototype.hasOwnProperty.call(obj, clean)) setOwn(obj, clean, item)
  }
}

/** `obj[key] = v`, except that a `__proto__` key stays an own property (as JSON.parse made it). */
function setOwn(obj: Record<string, unknown>, key: string, v: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value: v, writable: true, enumerable: true, configurable: true })
  else obj[key] = v
}
