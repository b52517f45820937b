import { AppError } from '../shared/errors.ts'
import { validationError } from '../shared/errors.ts'

/**
 * Readers for private-API request fields that accept and refuse what Django REST Framework's fields
 * do, with DRF's messages and sub-codes, so a client sees PostHog's `{type, code, detail, attr}` for
 * every bad field. Each reader takes the raw value and the `attr` to report (nested: `steps__0__url`).
 */

export type Body = Record<string, unknown>

function pyType(v: unknown): string {
  if (Array.isArray(v)) return 'list'
  if (v === null) return 'NoneType'
  if (typeof v === 'string') return 'str'
  if (typeof v === 'boolean') return 'bool'
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float'
  return 'dict'
}

/** How Python's `str()` shows a JSON value, for "is not a valid choice" messages. */
function pyStr(v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'boolean') return v ? 'True' : 'False'
  if (v === null) return 'None'
  return JSON.stringify(v)
}

/**
 * How deep a private-API body may nest (the body object is level 1), the limit capture applies too
 * (serde_json's 128). Stored JSON fields (flag filters, insight queries, dashboard templates, cohort
 * groups, action steps) can never be deeper, so nothing recursive downstream can overflow the stack.
 */
export const MAX_BODY_DEPTH = 128

/**
 * The request body as an object: absent means `{}`, anything but an object is DRF's 400, and so is a
 * body nested deeper than MAX_BODY_DEPTH (attr: the top-level field holding the deep value).
 */
export function readBody(raw: unknown): Body {
  if (raw === undefined || raw === null || raw === '') return {}
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw validationError(null, `Invalid data. Expected a dictionary, but got ${pyType(raw)}.`, 'invalid_input')
  }
  for (const key of Object.keys(raw)) {
    if (depthExceeds((raw as Body)[key], MAX_BODY_DEPTH - 1)) {
      throw validationError(key, `Nested too deeply: a request body may nest at most ${MAX_BODY_DEPTH} levels.`, 'invalid_input')
    }
  }
  return raw as Body
}

/** True when `value` nests arrays/objects more than `max` levels deep; iterative, so any depth is safe. */
export function depthExceeds(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  const stack: Array<[object, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (depth > max) return true
    for (const item of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof item === 'object' && item !== null) stack.push([item, depth + 1])
    }
  }
  return false
}

export function has(body: Body, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(body, key)
}

function notNull(attr: string): never {
  throw validationError(attr, 'This field may not be null.', 'null')
}

/** DRF CharField: numbers become strings, whitespace is trimmed, blank and null refused unless allowed. */
export function readString(
  v: unknown,
  attr: string,
  opts: { allowNull?: boolean; allowBlank?: boolean; maxLength?: number; trim?: boolean } = {},
): string | null {
  if (v === null) return opts.allowNull ? null : notNull(attr)
  if (typeof v !== 'string' && (typeof v !== 'number' || !Number.isFinite(v))) {
    throw validationError(attr, 'Not a valid string.', 'invalid_input')
  }
  const s = opts.trim === false ? String(v) : String(v).trim()
  if (s === '' && !opts.allowBlank) throw validationError(attr, 'This field may not be blank.', 'blank')
  if (opts.maxLength !== undefined && s.length > opts.maxLength) {
    throw validationError(attr, `Ensure this field has no more than ${opts.maxLength} characters.`, 'max_length')
  }
  return s
}

/** DRF URLField limited to http(s) (an outgoing webhook's address); blank or null is null when `allowNull`. */
export function readHttpUrl(v: unknown, attr: string, opts: { allowNull?: boolean } = {}): string | null {
  const text = readString(v, attr, { allowNull: opts.allowNull, allowBlank: opts.allowNull, maxLength: 2000 })
  if (text === null || text === '') return null
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw validationError(attr, 'Enter a valid URL.', 'invalid')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationError(attr, 'The URL must start with http:// or https://.', 'invalid')
  return url.toString()
}

const TRUE_VALUES = new Set<unknown>(['t', 'T', 'y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON', '1', 1, true])
const FALSE_VALUES = new Set<unknown>(['f', 'F', 'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF', '0', 0, false])

/** DRF BooleanField: true/false and their usual spellings. */
export function readBool(v: unknown, attr: string): boolean {
  if (v === null) return notNull(attr)
  if (TRUE_VALUES.has(v)) return true
  if (FALSE_VALUES.has(v)) return false
  throw validationError(attr, 'Must be a valid boolean.', 'invalid_input')
}

const INT4_MIN = -2_147_483_648
const INT4_MAX = 2_147_483_647

/**
 * DRF IntegerField: integers and integer strings, within the metadata store's 32-bit integer columns
 * (every id is one) unless `min`/`max` narrow it; DRF's `max_value`/`min_value` errors outside.
 */
export function readInt(v: unknown, attr: string, opts: { allowNull?: boolean; min?: number; max?: number } = {}): number | null {
  if (v === null) return opts.allowNull ? null : notNull(attr)
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*-?\d{1,20}(\.0*)?\s*$/.test(v) ? Number(v) : NaN
  if (!Number.isInteger(n)) throw validationError(attr, 'A valid integer is required.', 'invalid_input')
  const max = opts.max ?? INT4_MAX
  const min = opts.min ?? INT4_MIN
  if (n > max) throw validationError(attr, `Ensure this value is less than or equal to ${max}.`, 'max_value')
  if (n < min) throw validationError(attr, `Ensure this value is greater than or equal to ${min}.`, 'min_value')
  return n
}

/** DRF ChoiceField: the value's string form must name a choice; returns the choice itself. */
export function readChoice<T extends string | number>(v: unknown, attr: string, choices: readonly T[], opts: { allowNull?: boolean } = {}): T | null {
  if (v === null) return opts.allowNull ? null : notNull(attr)
  const found = choices.find((c) => String(c) === pyStr(v))
  if (found === undefined) throw validationError(attr, `"${pyStr(v)}" is not a valid choice.`, 'invalid_choice')
  return found
}

/** A JSON object (dict); `message` replaces DRF's default for fields that word it their own way. */
export function readObject(v: unknown, attr: string, opts: { allowNull?: boolean; message?: string } = {}): Body | null {
  if (v === null && opts.allowNull) return null
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw validationError(attr, opts.message ?? `Expected a dictionary of items but got type "${pyType(v)}".`, 'not_a_dict')
  }
  return v as Body
}

/** DRF ListField: a JSON array. */
export function readList(v: unknown, attr: string): unknown[] {
  if (v === null) return notNull(attr)
  if (!Array.isArray(v)) throw validationError(attr, `Expected a list of items but got type "${pyType(v)}".`, 'not_a_list')
  return v
}

/** Tags: a list of strings, trimmed, lower-cased and de-duplicated as PostHog's `tagify` does. */
export function readTags(v: unknown, attr = 'tags'): string[] {
  const out: string[] = []
  readList(v, attr).forEach((t, i) => {
    const s = readString(t, `${attr}__${i}`)!.toLowerCase()
    if (!out.includes(s)) out.push(s)
  })
  return out
}

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/

/** DRF DateTimeField (ISO 8601; a value without zone is read as UTC, the project's default zone). */
export function readDateTime(v: unknown, attr: string, opts: { allowNull?: boolean } = {}): Date | null {
  if (v === null) return opts.allowNull ? null : notNull(attr)
  const s = typeof v === 'string' ? v.trim() : ''
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/.test(s) || !s.includes(':') ? s : `${s}Z`
  const d = ISO_DATETIME.test(s) ? new Date(zoned.length === 10 ? `${zoned}T00:00:00Z` : zoned) : new Date(NaN)
  if (Number.isNaN(d.getTime())) {
    throw validationError(
      attr,
      'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
      'invalid_input',
    )
  }
  return d
}

/** A path id: only a positive 32-bit integer can name a record; anything else is simply not found. */
export function parseId(raw: string | undefined): number | null {
  if (raw === undefined || !/^\d+$/.test(raw)) return null
  const n = Number(raw)
  return n > 0 && n <= 2_147_483_647 ? n : null
}

/** The `:id` of a route's path as a record id, or `not_found` (what PostHog answers for a bad id). */
export function pathId(req: { params: unknown }): number {
  const id = parseId((req.params as Record<string, string | undefined>).id)
  if (id === null) throw new AppError('not_found', 'Not found.')
  return id
}
