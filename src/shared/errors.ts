/**
 * Stable machine codes for every error Tally reports. The one table mapping them to HTTP status and
 * PostHog's wire body lives in `http/error-table.ts`.
 */
export type ErrorCode =
  | 'invalid_payload'
  | 'invalid_project'
  | 'invalid_input'
  | 'validation_error'
  | 'invalid_api_key'
  | 'invalid_personal_api_key'
  | 'not_authenticated'
  | 'invalid_credentials'
  | 'csrf_failed'
  | 'throttled'
  | 'permission_denied'
  | 'not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'conflict'
  | 'not_implemented'
  | 'unsupported_media_type'
  | 'service_unavailable'
  | 'rate_limited'
  | 'query_timeout'
  | 'request_timeout'

/** An expected failure, carrying a stable code; `attr` names the offending field, as PostHog does. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly attr: string | null = null,
    readonly extra?: Record<string, unknown>,
  ) {
    super(message)
    this.name = 'AppError'
  }
}

/** Shorthand for a 400 validation error on one field, with PostHog's sub-code (`required`, `invalid_choice`...). */
export function validationError(attr: string | null, detail: string, subCode = 'invalid_input'): AppError {
  return new AppError('validation_error', detail, attr, { subCode })
}
