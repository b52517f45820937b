import { has, readBool, readChoice, readInt, readObject, readString, type Body } from '../../http/drf-fields.ts'
import { validationError } from '../../shared/errors.ts'
import {
  RETENTION_PERIODS,
  retentionPeriodOf,
  type LinkedFlag,
  type MaskingConfig,
  type NetworkPayloadCapture,
  type RecordingSettings,
  type RetentionPeriod,
} from '../../domain/replay/recording-settings.ts'

/** The project's replay settings under PostHog's TeamSerializer names (part of the project JSON). */
export function recordingSettingsJson(s: RecordingSettings) {
  return {
    session_recording_opt_in: s.optIn,
    session_recording_sample_rate: s.sampleRate,
    session_recording_minimum_duration_milliseconds: s.minimumDurationMs,
    session_recording_linked_flag: s.linkedFlag,
    capture_console_log_opt_in: s.consoleLogs,
    session_recording_network_payload_capture_config: s.networkPayloadCapture,
    session_recording_masking_config: s.masking,
    session_recording_retention_period: retentionPeriodOf(s.retentionDays),
  }
}

/**
 * Reads the replay fields of a project PATCH onto the current settings; null when the body has
 * none. Bad values get DRF's 400 naming the field.
 */
export function readRecordingSettingsPatch(body: Body, current: RecordingSettings): RecordingSettings | null {
  const next = { ...current }
  let changed = false
  const field = <T>(name: string, read: (v: unknown) => T, apply: (v: T) => void) => {
    if (!has(body, name)) return
    apply(read(body[name]))
    changed = true
  }
  field('session_recording_opt_in', (v) => readBool(v, 'session_recording_opt_in'), (v) => (next.optIn = v))
  field('session_recording_sample_rate', readSampleRate, (v) => (next.sampleRate = v))
  field(
    'session_recording_minimum_duration_milliseconds',
    (v) => readInt(v, 'session_recording_minimum_duration_milliseconds', { allowNull: true, min: 0, max: 30_000 }),
    (v) => (next.minimumDurationMs = v),
  )
  field('session_recording_linked_flag', readLinkedFlag, (v) => (next.linkedFlag = v))
  field('capture_console_log_opt_in', (v) => readBool(v, 'capture_console_log_opt_in'), (v) => (next.consoleLogs = v))
  field('session_recording_network_payload_capture_config', readNetworkCapture, (v) => (next.networkPayloadCapture = v))
  field('session_recording_masking_config', readMasking, (v) => (next.masking = v))
  field(
    'session_recording_retention_period',
    (v) => readChoice(v, 'session_recording_retention_period', Object.keys(RETENTION_PERIODS) as RetentionPeriod[])!,
    (v) => (next.retentionDays = RETENTION_PERIODS[v]),
  )
  return changed ? next : null
}

/** PostHog's DecimalField(max_digits=3, decimal_places=2) between 0 and 1, kept as "0.50". */
function readSampleRate(v: unknown): string | null {
  const attr = 'session_recording_sample_rate'
  if (v === null) return null
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d*(\.\d*)?\s*$/.test(v) ? Number(v) : NaN
  if (!Number.isFinite(n)) throw validationError(attr, 'A valid number is required.', 'invalid')
  if (n < 0 || n > 1) throw validationError(attr, 'Ensure this value is between 0 and 1.', 'invalid_input')
  if (Math.abs(Math.round(n * 100) - n * 100) > 1e-9) {
    throw validationError(attr, 'Ensure that there are no more than 2 decimal places.', 'max_decimal_places')
  }
  return n.toFixed(2)
}

function readLinkedFlag(v: unknown): LinkedFlag | null {
  const attr = 'session_recording_linked_flag'
  const o = readObject(v, attr, { allowNull: true })
  if (o === null) return null
  const key = readString(o.key, `${attr}__key`, { maxLength: 400 })!
  const id = has(o, 'id') ? readInt(o.id, `${attr}__id`, { allowNull: true, min: 1 }) : null
  const variant = has(o, 'variant') ? readString(o.variant, `${attr}__variant`, { allowNull: true, maxLength: 400 }) : null
  return { id, key, variant }
}

function readNetworkCapture(v: unknown): NetworkPayloadCapture | null {
  const attr = 'session_recording_network_payload_capture_config'
  const o = readObject(v, attr, { allowNull: true })
  if (o === null) return null
  const out: NetworkPayloadCapture = {}
  if (has(o, 'recordHeaders')) out.recordHeaders = readBool(o.recordHeaders, `${attr}__recordHeaders`)
  if (has(o, 'recordBody')) out.recordBody = readBool(o.recordBody, `${attr}__recordBody`)
  return out
}

function readMasking(v: unknown): MaskingConfig | null {
  const attr = 'session_recording_masking_config'
  const o = readObject(v, attr, { allowNull: true })
  if (o === null) return null
  const out: MaskingConfig = {}
  if (has(o, 'maskAllInputs')) out.maskAllInputs = readBool(o.maskAllInputs, `${attr}__maskAllInputs`)
  if (has(o, 'maskTextSelector')) out.maskTextSelector = readString(o.maskTextSelector, `${attr}__maskTextSelector`, { allowNull: true, maxLength: 1000 })
  if (has(o, 'blockSelector')) out.blockSelector = readString(o.blockSelector, `${attr}__blockSelector`, { allowNull: true, maxLength: 1000 })
  return out
}
