import { resolveInstant } from '../../domain/query/date-range.ts'
import { validationError } from '../../shared/errors.ts'
import type { EventCondition } from './recording-service.ts'
import type { NumericKey, RecordingFilter, RecordingOrder } from './recording-store.ts'

type Query = Record<string, unknown>

const ORDERS: readonly RecordingOrder[] = ['start_time', 'duration', 'active_seconds', 'click_count', 'console_error_count']
const KEYS: readonly NumericKey[] = ['duration', 'active_seconds', 'click_count', 'keypress_count', 'console_error_count']
const OPERATORS = ['gt', 'lt', 'exact'] as const
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i
const MAX_LIMIT = 1000

/** A query parameter holding JSON (PostHog's list filters are JSON-encoded strings); absent: null. */
function jsonParam(q: Query, key: string): unknown {
  const raw = q[key]
  if (raw === undefined || raw === '') return null
  if (typeof raw !== 'string') throw validationError(key, 'Must be a JSON-encoded value.', 'invalid_input')
  try {
    return JSON.parse(raw)
  } catch {
    throw validationError(key, 'Must be a JSON-encoded value.', 'invalid_input')
  }
}

function list(v: unknown, attr: string): Record<string, unknown>[] {
  if (v === null) return []
  if (!Array.isArray(v) || v.some((x) => x === null || typeof x !== 'object' || Array.isArray(x))) {
    throw validationError(attr, 'Expected a list of objects.', 'not_a_list')
  }
  return v as Record<string, unknown>[]
}

/**
 * The session_recordings list's query parameters as PostHog's `RecordingsQuery` takes them:
 * `date_from`/`date_to` (`-3d` default, relative or ISO), `person_uuid`, `distinct_ids`, `session_ids`,
 * `having_predicates` / `session_recording_duration` (`{key, operator: gt|lt|exact, value}` on
 * duration, active_seconds, click/keypress/console-error counts), `console_log_filters` (level
 * error), `events` (name and event property filters: sessions where such an event happened),
 * `order`, `limit`/`offset`. Anything malformed is a 400 naming the parameter.
 */
export function readRecordingListQuery(q: Query, now: Date, timeZone: string): { filter: RecordingFilter; events: EventCondition[] } {
  const str = (key: string) => (typeof q[key] === 'string' && q[key] !== '' ? (q[key] as string) : null)
  const dateFrom = str('date_from') === 'all' ? null : resolveInstant(str('date_from') ?? '-3d', now, timeZone, 'date_from')
  const dateTo = str('date_to') ? resolveInstant(str('date_to')!, now, timeZone, 'date_to') : null
  const personUuid = str('person_uuid')
  if (personUuid !== null && !UUID.test(personUuid)) throw validationError('person_uuid', 'Must be a valid UUID.', 'invalid')
  const strings = (key: string) => {
    const v = jsonParam(q, key)
    if (v === null) return null
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw validationError(key, 'Expected a list of strings.', 'not_a_list')
    return v as string[]
  }
  const predicates: RecordingFilter['predicates'] = []
  const legacy = jsonParam(q, 'session_recording_duration')
  const sources: [string, Record<string, unknown>[]][] = [
    ['having_predicates', list(jsonParam(q, 'having_predicates'), 'having_predicates')],
    ['session_recording_duration', list(legacy === null ? null : [legacy], 'session_recording_duration')],
  ]
  for (const [attr, raw] of sources) {
    raw.forEach((p, i) => {
      const at = `${attr}.${i}`
      const key = p.key as NumericKey
      const operator = p.operator as (typeof OPERATORS)[number]
      const value = Number(p.value)
      if (!KEYS.includes(key)) throw validationError(`${at}.key`, `"${String(p.key)}" is not a valid choice.`, 'invalid_choice')
      if (!OPERATORS.includes(operator)) throw validationError(`${at}.operator`, `"${String(p.operator)}" is not a valid choice.`, 'invalid_choice')
      if (!Number.isFinite(value)) throw validationError(`${at}.value`, 'A valid number is required.', 'invalid')
      predicates.push({ key, operator, value })
    })
  }
  list(jsonParam(q, 'console_log_filters'), 'console_log_filters').forEach((f, i) => {
    const levels = Array.isArray(f.value) ? f.value : [f.value]
    if (f.key !== 'level') throw validationError(`console_log_filters.${i}.key`, 'Only "level" can be filtered on.', 'invalid_choice')
    // Tally counts errors per recording; "error" keeps the recordings that logged at least one.
    if (levels.includes('error')) predicates.push({ key: 'console_error_count', operator: 'gt', value: 0 })
  })
  const events = list(jsonParam(q, 'events'), 'events').map((e, i): EventCondition => {
    const name = e.id ?? e.name ?? null
    if (name !== null && typeof name !== 'string') throw validationError(`events.${i}.id`, 'Not a valid string.', 'invalid_input')
    const properties = e.properties ?? []
    if (!Array.isArray(properties)) throw validationError(`events.${i}.properties`, 'Expected a list of items.', 'not_a_list')
    return { event: name, properties }
  })
  const order = (str('order') ?? 'start_time') as RecordingOrder
  if (!ORDERS.includes(order)) throw validationError('order', `"${order}" is not a valid choice.`, 'invalid_choice')
  const limit = Number(q.limit ?? 50)
  const offset = Number(q.offset ?? 0)
  if (!Number.isInteger(limit) || limit < 1) throw validationError('limit', 'A valid integer is required.', 'invalid')
  if (!Number.isInteger(offset) || offset < 0) throw validationError('offset', 'A valid integer is required.', 'invalid')
  return {
    filter: {
      dateFrom, dateTo, personUuid, distinctIds: strings('distinct_ids'), sessionIds: strings('session_ids'),
      predicates, order, limit: Math.min(limit, MAX_LIMIT), offset,
    },
    events,
  }
}
