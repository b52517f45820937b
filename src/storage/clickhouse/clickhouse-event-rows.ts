import type { StoredEvent } from '../../ingestion/event-store.ts'
import { MATERIALIZED_PROPERTIES, NONSTRING_KEYS } from '../duckdb/materialized-properties.ts'

/**
 * The JSONEachRow text (UTF-8) of events for the `events` table, written from the properties' JSON text
 * without parsing it: the properties (and the person's) are JSON.stringify's output, so a top-level
 * key's text and a string value's text are already the JSON literals the row needs, and a scan of
 * the text finds where each member starts and ends. Profiled before: parsing the properties, building
 * a row object with the top-level key/value arrays and the client's JSON.stringify of it were about
 * half the worker's CPU on the scale stack.
 *
 * The row is what `json_extract_string` gives in DuckDB, per top-level key (migration 0001): a
 * string's text, any other value's JSON text, keys holding null apart; the `mat_*` columns are the
 * same for their keys, `mat_nonstring` bit i set when key i is not a string. A text the scan does not
 * expect (white space, a lone surrogate escaped, anything JSON.stringify does not write) is parsed
 * instead, value by value or whole.
 */
export function eventRowsText(events: readonly StoredEvent[]): Buffer {
  // Events of one person version share its properties' text (the persons step hands on one string).
  const persons = new Map<string, PersonColumns>()
  // UTF-8 row by row into one buffer: a string of the whole batch cost the HTTP write a flatten and a
  // byteLength scan of megabytes (profiled: 8 % of the worker), and its garbage.
  let buf = Buffer.allocUnsafe(64 * 1024)
  let off = 0
  for (const e of events) {
    const text = e.personProperties
    let person = text == null ? NO_PERSON : persons.get(text)
    if (person === undefined) persons.set(text!, (person = personColumns(text!)))
    const row = rowText(e, membersOf(e.properties), person)
    // Worst case 3 bytes per UTF-16 unit.
    if (off + 3 * row.length > buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(off + 3 * row.length, 2 * buf.length))
      buf.copy(bigger, 0, 0, off)
      buf = bigger
    }
    off += buf.write(row, off, 'utf8')
  }
  return buf.subarray(0, off)
}

/** Top-level members as JSON literals: keys and values of the non-null ones (values as json_extract_string's text), keys of the null ones. */
interface Members {
  keys: string[]
  values: string[]
  /** Per key: whether its value is a JSON string. */
  isString: boolean[]
  nullKeys: string[]
}

/** The person's part of a row, the same for every event of one person version. */
interface PersonColumns { literal: string; arrays: string }

function personColumns(text: string | null): PersonColumns {
  const m = text === null ? { keys: [], values: [], nullKeys: [] } : membersOf(text)
  return {
    literal: text === null ? 'null' : literal(text),
    arrays: `,"person_prop_keys":[${m.keys.join(',')}],"person_prop_values":[${m.values.join(',')}],"person_prop_null_keys":[${m.nullKeys.join(',')}]`,
  }
}

const NO_PERSON = personColumns(null)
const MAT_KEYS = [...MATERIALIZED_PROPERTIES.keys()].map((k) => JSON.stringify(k))
const MAT_COLUMNS = [...MATERIALIZED_PROPERTIES.values()]
const MAX_DATETIME = 4_294_967_295

function rowText(e: StoredEvent, props: Members, person: PersonColumns): string {
  const ms = e.timestamp.getTime()
  const createdMs = e.createdAt.getTime()
  let row = `{"uuid":${JSON.stringify(e.uuid)},"project_id":${e.projectId},"event":${literal(e.event)},"distinct_id":${literal(e.distinctId)}`
  row += `,"properties":${literal(e.properties)},"elements_chain":${literal(e.elementsChain)}`
  row += `,"timestamp":${clampSeconds(ms)},"timestamp_ms":${ms},"created_at":${clampSeconds(createdMs)},"created_at_ms":${createdMs}`
  row += `,"person_id":${e.personId === null ? 'null' : JSON.stringify(e.personId)},"person_properties":${person.literal}`
  row += `,"prop_keys":[${props.keys.join(',')}],"prop_values":[${props.values.join(',')}],"prop_null_keys":[${props.nullKeys.join(',')}]`
  row += person.arrays
  for (let i = 0; i < 5; i++) {
    const g = e.groups?.[i]
    row += `,"group_${i}":${g === undefined || g === null ? 'null' : literal(g)}`
  }
  let nonString = 0
  for (let m = 0; m < MAT_KEYS.length; m++) {
    const at = props.keys.indexOf(MAT_KEYS[m]!)
    row += `,"${MAT_COLUMNS[m]}":${at < 0 ? 'null' : props.values[at]}`
    if (at >= 0 && !props.isString[at] && m < NONSTRING_KEYS) nonString |= 1 << m
  }
  return `${row},"mat_nonstring":${nonString}}\n`
}

/** `text` as a JSON string literal, lone surrogates as U+FFFD (as a UTF-8 write would make them). */
function literal(text: string): string {
  return JSON.stringify(wellFormed(text))
}

/** The members of a JSON object's text: scanned when it is as JSON.stringify writes it, else parsed. */
function membersOf(text: string): Members {
  return scanMembers(text) ?? parsedMembers(text)
}

function parsedMembers(text: string): Members {
  const members: Members = { keys: [], values: [], isString: [], nullKeys: [] }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return members
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return members
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === null || v === undefined) {
      members.nullKeys.push(literal(k))
      continue
    }
    members.keys.push(literal(k))
    members.isString.push(typeof v === 'string')
    members.values.push(literal(typeof v === 'string' ? v : JSON.stringify(v)))
  }
  return members
}

const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * The members of `text` when it is an object as JSON.stringify writes it (no white space, no
 * duplicate keys), else null. A key's or a string value's literal is taken as it is unless it holds
 * an escaped surrogate (then decoded, made well-formed and written again); any other value's JSON
 * text becomes a string literal.
 */
function scanMembers(text: string): Members | null {
  const n = text.length
  if (text.charCodeAt(0) !== 0x7b || text.charCodeAt(n - 1) !== 0x7d) return null
  // JSON.stringify escapes only lone surrogates as \uXXXX: a text without such an escape needs no check per literal.
  const asIs = text.indexOf('\\ud') < 0 && text.indexOf('\\uD') < 0
  const stringLiteral = asIs ? (raw: string) => raw : escapedStringLiteral
  const members: Members = { keys: [], values: [], isString: [], nullKeys: [] }
  if (n === 2) return members
  let at = 1
  for (;;) {
    if (text.charCodeAt(at) !== QUOTE) return null
    const keyEnd = stringEnd(text, at)
    if (keyEnd < 0 || text.charCodeAt(keyEnd) !== 0x3a /* : */) return null
    const key = stringLiteral(text.slice(at, keyEnd))
    const start = keyEnd + 1
    const c = text.charCodeAt(start)
    const end = c === QUOTE ? stringEnd(text, start) : c === 0x7b || c === 0x5b ? compositeEnd(text, start) : primitiveEnd(text, start)
    if (end <= start) return null
    const raw = text.slice(start, end)
    if (raw === 'null') {
      members.nullKeys.push(key)
    } else {
      members.keys.push(key)
      members.isString.push(c === QUOTE)
      members.values.push(c === QUOTE ? stringLiteral(raw) : literal(raw))
    }
    const next = text.charCodeAt(end)
    if (next === 0x7d /* } */) return end === n - 1 ? members : null
    if (next !== 0x2c /* , */) return null
    at = end + 1
  }
}

/** A JSON string literal as the row takes it: as it is, unless it escapes a surrogate (which may be lone). */
function escapedStringLiteral(raw: string): string {
  if (raw.indexOf('\\ud') < 0 && raw.indexOf('\\uD') < 0) return raw
  return literal(JSON.parse(raw) as string)
}

/** The index after the closing quote of the string opening at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  let from = start + 1
  for (;;) {
    const q = text.indexOf('"', from)
    if (q < 0) return -1
    let b = q - 1
    while (text.charCodeAt(b) === BACKSLASH) b--
    if ((q - 1 - b) % 2 === 0) return q + 1
    from = q + 1
  }
}

/** The index after the object or array opening at `start`, or -1. */
function compositeEnd(text: string, start: number): number {
  let depth = 0
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = stringEnd(text, i)
      if (end < 0) return -1
      i = end - 1
    } else if (c === 0x7b || c === 0x5b) {
      depth++
    } else if ((c === 0x7d || c === 0x5d) && --depth === 0) {
      return i + 1
    }
  }
  return -1
}

/** The index after the number, true, false or null at `start`: the next `,` or `}`. */
function primitiveEnd(text: string, start: number): number {
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x2c || c === 0x7d) return i
    // White space, quotes or brackets here are not JSON.stringify's: the caller parses instead.
    if (c <= 0x20 || c === QUOTE || c === 0x5b || c === 0x7b) return -1
  }
  return -1
}

/** Seconds since 1970 within DateTime's range (the exact instant is in the `_ms` column). */
function clampSeconds(ms: number): number {
  return Math.min(MAX_DATETIME, Math.max(0, Math.floor(ms / 1000)))
}

/** Lone surrogates become U+FFFD (as a UTF-8 write would). */
function wellFormed(s: string): string {
  const w = s as unknown as { isWellFormed(): boolean; toWellFormed(): string }
  return w.isWellFormed() ? s : w.toWellFormed()
}
