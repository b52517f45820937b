import { AppError } from '../../shared/errors.ts'
import type { IngestionWarning } from './parse-event-timestamp.ts'
import { parseSentAt } from './parse-sent-at.ts'

/** One event as a client sent it: PostHog wire names, nothing checked yet beyond "is an object". */
export interface RawEvent {
  event?: unknown
  distinct_id?: unknown
  $distinct_id?: unknown
  properties?: unknown
  timestamp?: unknown
  offset?: unknown
  uuid?: unknown
  $set?: unknown
  $set_once?: unknown
  [key: string]: unknown
}

export interface ExtractEventsInput {
  /** The decoded JSON body (see decodeCaptureBody). */
  payload: unknown
  /** Form fields of a form-urlencoded body, without `data`. */
  form?: Record<string, string>
  /** The parsed query string (`token`, `api_key`, `_`...). */
  query?: Record<string, unknown>
  method?: string
  /** True on `/engage` paths: an object without `event` is a people update, ingested as `$identify`. */
  isEngage?: boolean
}

export interface ExtractedEvents {
  /** The project token (trimmed), or null when the request carries none. Shape not yet checked. */
  token: string | null
  /** At least one event; each a non-empty object. */
  events: RawEvent[]
  /** The request's sent_at (batch `sent_at`, form `sent_at` or query `_`), null when absent/invalid. */
  sentAt: Date | null
  /** `historical_migration: true` on a batch object. */
  historicalMigration: boolean
  warnings: IngestionWarning[]
}

/**
 * Splits a capture payload into events and finds the project token, as PostHog's capture does.
 * Accepted shapes: a bare array of events; a batch object `{batch: [...], api_key|token, sent_at,
 * historical_migration}` (posthog-node, posthog-python, posthog-js); a single event object.
 * Token order (Django `get_token`, then Rust's per-event rule): GET query `token`/`api_key`; form
 * `api_key`/`token`; the top object's `$token`/`token`/`api_key`/`properties.token`; otherwise the
 * events' own tokens, which must agree (Rust: 401 when they differ); last, query `token`/`api_key`.
 * Throws AppError('invalid_payload') for an empty batch or a non-object event.
 */
export function extractEvents(input: ExtractEventsInput): ExtractedEvents {
  const { payload } = input
  const query = input.query ?? {}
  const form = input.form ?? {}
  let top: Record<string, unknown> | null = null
  let list: unknown[]
  if (Array.isArray(payload)) {
    list = payload
  } else if (isObject(payload)) {
    top = payload
    if ('batch' in payload) {
      if (!Array.isArray(payload.batch)) throw new AppError('invalid_payload', 'Invalid payload: batch must be an array', 'batch')
      list = payload.batch
    } else {
      list = [payload]
    }
  } else {
    throw new AppError('invalid_payload', 'Malformed request data: expected a JSON object or array of events')
  }
  if (list.length === 0) throw new AppError('invalid_payload', 'Invalid payload: request holds no event')

  const events: RawEvent[] = new Array(list.length)
  for (let i = 0; i < list.length; i++) {
    const item = list[i]
    if (!isObject(item) || isEmpty(item)) throw new AppError('invalid_payload', 'Invalid payload: some events are null')
    events[i] = input.isEngage && item.event === undefined ? { ...item, event: '$identify' } : item
  }

  const warnings: IngestionWarning[] = []
  const sent = parseSentAt(top?.sent_at ?? form.sent_at, firstString(query._))
  if (sent.invalid !== null) {
    warnings.push({ type: 'ignored_invalid_timestamp', details: { field: 'sent_at', value: sent.invalid, reason: 'unparseable' } })
  }
  return {
    token: findToken(input, top, events),
    events,
    sentAt: sent.sentAt,
    historicalMigration: top?.historical_migration === true,
    warnings,
  }
}

function findToken(input: ExtractEventsInput, top: Record<string, unknown> | null, events: RawEvent[]): string | null {
  const query = input.query ?? {}
  const form = input.form ?? {}
  const isGet = (input.method ?? 'POST').toUpperCase() === 'GET'
  const fromQuery = () => pick(firstString(query.token)) ?? pick(firstString(query.api_key))
  if (isGet) {
    const token = fromQuery()
    if (token) return token
  }
  const fromForm = pick(form.api_key) ?? pick(form.token)
  if (fromForm) return fromForm
  const fromTop = top ? eventToken(top) : null
  if (fromTop) return fromTop
  if (top === null || 'batch' in top) {
    const tokens = new Set<string>()
    for (const event of events) {
      const token = eventToken(event)
      if (token) tokens.add(token)
    }
    if (tokens.size > 1) throw new AppError('invalid_api_key', 'batch submitted with inconsistent api_key values')
    if (tokens.size === 1) return tokens.values().next().value!
  }
  return fromQuery()
}

/** An object's own token: `$token`, `token`, `api_key`, then `properties.token` (Django order). */
function eventToken(obj: Record<string, unknown>): string | null {
  const props = obj.properties
  return (
    pick(obj.$token) ?? pick(obj.token) ?? pick(obj.api_key) ?? (isObject(props) ? pick(props.token) : null)
  )
}

function pick(value: unknown): string | null {
  if (typeof value !== 'string') return null
  const trimmed = value.trim()
  return trimmed === '' ? null : trimmed
}

function firstString(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0]
  return undefined
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isEmpty(obj: Record<string, unknown>): boolean {
  for (const _ in obj) return false
  return true
}

export type TokenShapeProblem = 'empty' | 'too_long' | 'not_ascii' | 'personal_api_key' | 'null_byte'

/**
 * Why a token can't be a project API key, or null when its shape is fine (Django
 * `_check_token_shape`, Rust `validate_token`): empty, over 64 characters, non-ASCII, a NUL byte,
 * or a personal API key (`phx_`). PostHog answers 401 "Provided API key is not valid: <reason>".
 */
export function checkTokenShape(token: string): TokenShapeProblem | null {
  if (token === '') return 'empty'
  if (token.length > 64) return 'too_long'
  if (token.includes('\u0000')) return 'null_byte'
  if (!/^[\x00-\x7f]*$/.test(token)) return 'not_ascii'
  if (token.startsWith('phx_')) return 'personal_api_key'
  return null
}
