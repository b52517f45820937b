import { gunzipSync } from 'node:zlib'
import { AppError } from '../../shared/errors.ts'
import { decompressLz64 } from './decompress-lz64.ts'
import { parseLenientJson } from './parse-lenient-json.ts'
import { MAX_JSON_DEPTH, sanitiseParsedJson } from './sanitise-json.ts'

// How PostHog reads a capture body: Rust capture (`payload/common.rs`, `v0_request.rs`), which PostHog
// runs today, plus the Django leniencies (`posthog/utils.py` `load_data_from_request`) that cost nothing.

export interface CaptureBodyInput {
  /** Raw request body bytes; empty or absent for GET. */
  body?: Buffer | null
  contentType?: string | null
  contentEncoding?: string | null
  /** Parsed (already URL-decoded) query string: `data`, `compression`, `ver`, `_`, ... */
  query?: Record<string, unknown>
  method?: string
  /** Upper bound on the decoded payload size in bytes (a gzip bomb beyond it is rejected). */
  maxBytes?: number
  /**
   * Leave strings as sent (no U+0000 / lone-surrogate cleaning; depth still bounded): recordings,
   * whose latin1-packed gzip parts hold U+0000 and go to files, not to a database.
   */
  rawStrings?: boolean
  /**
   * Runs on the parsed payload (and the form's fields) before the text-cleaning walk, which costs more
   * than the parse on a body of many keys: a count limit refused here costs the parse and the count
   * only (issue 29: 168 ms of CPU for one event of 100,000 keys when the walk came first). Throws to
   * refuse; it must only read the payload.
   */
  check?: (payload: unknown, form: Record<string, string>) => void
}

export interface DecodedCaptureBody {
  /** The parsed JSON: an event, a batch object or an array, still unchecked. */
  payload: unknown
  /** Fields of a form-urlencoded body (`data` excluded): `api_key`, `token`, `compression`, `sent_at`... */
  form: Record<string, string>
}

/** Django's DATA_UPLOAD_MAX_MEMORY_SIZE and Rust's `/batch` limit: 20 MiB. */
export const DEFAULT_MAX_DECODED_BYTES = 20 * 1024 * 1024

type Compression = 'gzip' | 'lz64' | 'base64' | 'none'

const FORM_PREFIXES = ['data=', 'ver=', '_=', 'ip=', 'compression=']
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Decodes a capture request body to its JSON payload, whatever way an SDK packed it:
 * - payload = query `data` when non-empty (GET `?data=`), else the body; a form-urlencoded body
 *   (by Content-Type, or by starting with `data=`, `ver=`, ...) contributes its `data` field;
 * - compression hint = query `compression` > form `compression` > Content-Encoding: `gzip`/`gzip-js`,
 *   `lz64`/`lz-string`, `base64`/`b64`; gzip is also sniffed from the 1f 8b magic bytes (posthog-js
 *   sends gzip as text/plain with no hint);
 * - text that still looks like base64 is decoded (twice at most: form bodies and legacy paths do that);
 * - JSON with NaN/Infinity literals (Python SDKs) reads them as null;
 * - every string is cleaned (lone surrogates and U+0000 become U+FFFD, see `cleanText`) and a body
 *   nested deeper than 128 levels is refused whole, as Rust capture (serde_json) does.
 * Throws AppError('invalid_payload') on anything undecodable and 'payload_too_large' past `maxBytes`.
 */
export function decodeCaptureBody(input: CaptureBodyInput): DecodedCaptureBody {
  const maxBytes = input.maxBytes ?? DEFAULT_MAX_DECODED_BYTES
  const query = input.query ?? {}
  let form: Record<string, string> = {}
  let raw: Buffer | string
  const queryData = firstString(query.data)
  if (queryData) {
    raw = queryData
  } else {
    const body = input.body
    if (!body || body.length === 0) {
      throw new AppError(
        'invalid_payload',
        'No data found. Make sure to use a POST request when sending the payload in the body of the request.',
      )
    }
    if (isFormContentType(input.contentType) || hasFormPrefix(body)) {
      form = parseForm(body)
      if (!form.data) throw new AppError('invalid_payload', 'Malformed request data: expected form data in POST request payload')
      raw = form.data
      delete form.data
    } else {
      raw = body
    }
  }
  const hint = compressionHint(firstString(query.compression) || form.compression || input.contentEncoding || '')
  const text = decompress(raw, hint, maxBytes)
  return { payload: parseJson(unwrapBase64(text, maxBytes), !input.rawStrings, (parsed) => input.check?.(parsed, form)), form }
}

function firstString(value: unknown): string {
  if (typeof value === 'string') return value
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0]
  return ''
}

function isFormContentType(contentType: string | null | undefined): boolean {
  if (!contentType) return false
  return contentType.split(';', 1)[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded'
}

function hasFormPrefix(body: Buffer): boolean {
  const head = body.subarray(0, 12).toString('latin1')
  return FORM_PREFIXES.some((p) => head.startsWith(p))
}

function parseForm(body: Buffer): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const [key, value] of new URLSearchParams(body.toString('utf8'))) if (!(key in fields)) fields[key] = value
  return fields
}

function compressionHint(value: string): Compression {
  switch (value.trim().toLowerCase()) {
    case 'gzip':
    case 'gzip-js':
      return 'gzip'
    case 'lz64':
    case 'lz-string':
      return 'lz64'
    case 'base64':
    case 'b64':
      return 'base64'
    default:
      return 'none'
  }
}

function decompress(raw: Buffer | string, hint: Compression, maxBytes: number): string {
  if (hint === 'lz64') {
    const packed = (typeof raw === 'string' ? raw : raw.toString('latin1')).replace(/ /g, '+')
    const out = decompressLz64(packed.trim(), maxBytes)
    if (!out) throw new AppError('invalid_payload', 'Malformed request data: Failed to decompress data.')
    return out
  }
  let bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw
  if (hint === 'gzip' && !isGzip(bytes) && typeof raw === 'string') {
    // A gzip hint on a string payload (query/form `data`) means the gzip bytes travel base64-encoded.
    const decoded = tryBase64(raw)
    if (decoded) bytes = decoded
  }
  if (hint === 'gzip' || isGzip(bytes)) return toText(gunzip(bytes, maxBytes), maxBytes)
  return toText(bytes, maxBytes)
}

function isGzip(bytes: Buffer): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b
}

function gunzip(bytes: Buffer, maxBytes: number): Buffer {
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes })
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw new AppError('payload_too_large', 'Decompressed payload is too large.')
    }
    throw new AppError('invalid_payload', `Malformed request data: Failed to decompress gzip data: ${(err as Error).message}`)
  }
}

function toText(bytes: Buffer, maxBytes: number): string {
  if (bytes.length > maxBytes) throw new AppError('payload_too_large', 'Payload is too large.')
  try {
    return utf8.decode(bytes)
  } catch {
    throw new AppError('invalid_payload', 'Malformed request data: invalid UTF-8 in request payload')
  }
}

const BASE64_TEXT = /^[A-Za-z0-9+/=\s_-]+$/

/** Decodes text that is base64 rather than JSON (at most twice); keeps it as is when decoding fails. */
function unwrapBase64(text: string, maxBytes: number): string {
  let current = text
  for (let round = 0; round < 2; round++) {
    const first = current.trimStart().charAt(0)
    if (first === '{' || first === '[' || first === '"' || !BASE64_TEXT.test(current)) return current
    const bytes = tryBase64(current)
    if (!bytes) return current
    try {
      current = isGzip(bytes) ? toText(gunzip(bytes, maxBytes), maxBytes) : utf8.decode(bytes)
    } catch (err) {
      if (err instanceof AppError && err.code === 'payload_too_large') throw err
      return current
    }
  }
  return current
}

/** Standard or url-safe base64 with URL-decoding damage repaired (`+` turned to space) and padding added. */
function tryBase64(text: string): Buffer | null {
  const cleaned = text.replace(/ /g, '+').replace(/[\r\n\t]/g, '')
  if (cleaned === '' || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(cleaned)) return null
  const padded = cleaned.length % 4 === 0 ? cleaned : cleaned + '='.repeat(4 - (cleaned.length % 4))
  const bytes = Buffer.from(padded, 'base64')
  return bytes.length > 0 ? bytes : null
}

function parseJson(text: string, clean: boolean, check: (parsed: unknown) => void): unknown {
  let parsed: unknown
  try {
    parsed = parseLenientJson(text)
  } catch (err) {
    throw new AppError('invalid_payload', `Malformed request data: Invalid JSON: ${(err as Error).message}`)
  }
  check(parsed)
  const checked = sanitiseParsedJson(parsed, MAX_JSON_DEPTH, clean)
  if (checked === null) {
    throw new AppError('invalid_payload', `Malformed request data: JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
  }
  return checked.value
}
