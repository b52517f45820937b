import type { ErrorCode } from '../shared/errors.ts'

/** PostHog's wire error body (drf-exceptions-hog shape). */
export interface WireError {
  type: string
  code: string
  detail: string
  attr: string | null
}

interface ErrorRow {
  status: number
  type: string
  /** PostHog's `code` on the wire; validation errors carry their own sub-code instead. */
  wireCode: string
}

/** The one mapping from Tally's error codes to HTTP status and PostHog's `{type, code}`. */
export const ERROR_TABLE = {
  invalid_payload: { status: 400, type: 'validation_error', wireCode: 'invalid_payload' },
  invalid_project: { status: 400, type: 'validation_error', wireCode: 'invalid_project' },
  invalid_input: { status: 400, type: 'validation_error', wireCode: 'invalid_input' },
  validation_error: { status: 400, type: 'validation_error', wireCode: 'invalid_input' },
  invalid_api_key: { status: 401, type: 'authentication_error', wireCode: 'invalid_api_key' },
  invalid_personal_api_key: { status: 401, type: 'authentication_error', wireCode: 'invalid_personal_api_key' },
  not_authenticated: { status: 401, type: 'authentication_error', wireCode: 'not_authenticated' },
  invalid_credentials: { status: 400, type: 'validation_error', wireCode: 'invalid_credentials' },
  csrf_failed: { status: 403, type: 'authentication_error', wireCode: 'csrf_failed' },
  throttled: { status: 429, type: 'throttled_error', wireCode: 'throttled' },
  permission_denied: { status: 403, type: 'authentication_error', wireCode: 'permission_denied' },
  not_found: { status: 404, type: 'invalid_request', wireCode: 'not_found' },
  method_not_allowed: { status: 405, type: 'invalid_request', wireCode: 'method_not_allowed' },
  payload_too_large: { status: 413, type: 'client_error', wireCode: 'request_too_large' },
  conflict: { status: 409, type: 'conflict', wireCode: 'conflict' },
  not_implemented: { status: 501, type: 'server_error', wireCode: 'not_implemented' },
  unsupported_media_type: { status: 415, type: 'invalid_request', wireCode: 'unsupported_media_type' },
  service_unavailable: { status: 503, type: 'server_error', wireCode: 'service_unavailable' },
  rate_limited: { status: 429, type: 'throttled_error', wireCode: 'throttled' },
  query_timeout: { status: 504, type: 'server_error', wireCode: 'query_timeout' },
  request_timeout: { status: 408, type: 'client_error', wireCode: 'request_timeout' },
} as const satisfies Record<ErrorCode, ErrorRow>
