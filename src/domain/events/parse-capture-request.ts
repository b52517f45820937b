import { decodeCaptureBody, type CaptureBodyInput } from './decode-capture-body.ts'
import { extractEvents, type ExtractedEvents } from './extract-events.ts'

export interface CaptureRequestInput extends CaptureBodyInput {
  /** True when the path starts with `/engage` (nameless objects become `$identify`). */
  isEngage?: boolean
}

/**
 * decodeCaptureBody then extractEvents: one call for the capture routes. Throws AppError
 * ('invalid_payload', 'payload_too_large', or 'invalid_api_key' for inconsistent batch tokens).
 */
export function parseCaptureRequest(input: CaptureRequestInput): ExtractedEvents {
  const { payload, form } = decodeCaptureBody(input)
  return extractEvents({ payload, form, query: input.query, method: input.method, isEngage: input.isEngage })
}
