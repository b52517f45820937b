import { validationError, type AppError } from '../../shared/errors.ts'

/**
 * A query PostHog's HogQL would refuse, or that Tally does not run: a 400 on `query.query` (the
 * field holding the SQL) whose detail names the offending part.
 */
export function hogqlError(detail: string): AppError {
  return validationError('query.query', detail, 'invalid_input')
}
