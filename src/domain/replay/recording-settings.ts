/**
 * A project's session-replay settings (PostHog's Team fields `session_recording_*` and
 * `capture_console_log_opt_in`) and the `sessionRecording` member of the remote config built from
 * them (PostHog `posthog/api/remote_config` / `decide.py` `_session_recording_config_response`).
 */
export interface RecordingSettings {
  /** `session_recording_opt_in`: recordings are taken (the remote config turns the recorder on). */
  optIn: boolean
  /** `session_recording_sample_rate`: share of sessions recorded, "0.00".."1.00"; null = all. */
  sampleRate: string | null
  /** `session_recording_minimum_duration_milliseconds`: shorter sessions are not sent by the SDK. */
  minimumDurationMs: number | null
  /** `session_recording_linked_flag`: only sessions where this flag (variant) is on are recorded. */
  linkedFlag: LinkedFlag | null
  /** `capture_console_log_opt_in` (PostHog's default: on): console logs go into the recording. */
  consoleLogs: boolean
  /** `session_recording_network_payload_capture_config`: network requests' headers/bodies in the recording. */
  networkPayloadCapture: NetworkPayloadCapture | null
  /** `session_recording_masking_config`: what the recorder masks (all inputs by default in posthog-js). */
  masking: MaskingConfig | null
  /** Days a recording is kept (PostHog's `session_recording_retention_period`, default "30d"). */
  retentionDays: number
}

export interface LinkedFlag {
  id: number | null
  key: string
  variant: string | null
}

export interface NetworkPayloadCapture {
  recordHeaders?: boolean
  recordBody?: boolean
}

export interface MaskingConfig {
  maskAllInputs?: boolean
  maskTextSelector?: string | null
  blockSelector?: string | null
}

/** PostHog's retention choices and their days. */
export const RETENTION_PERIODS = { '30d': 30, '90d': 90, '1y': 365, '5y': 1825 } as const
export type RetentionPeriod = keyof typeof RETENTION_PERIODS

export const DEFAULT_RECORDING_SETTINGS: RecordingSettings = Object.freeze({
  optIn: false,
  sampleRate: null,
  minimumDurationMs: null,
  linkedFlag: null,
  consoleLogs: true,
  networkPayloadCapture: null,
  masking: null,
  retentionDays: 30,
})

/** The settings stored for a project (a JSON object, possibly partial or empty) with defaults filled in. */
export function readStoredRecordingSettings(stored: unknown): RecordingSettings {
  const s = stored !== null && typeof stored === 'object' ? (stored as Partial<RecordingSettings>) : {}
  return { ...DEFAULT_RECORDING_SETTINGS, ...s }
}

/** The retention period name of a number of days (the closest choice at or above it). */
export function retentionPeriodOf(days: number): RetentionPeriod {
  const found = (Object.entries(RETENTION_PERIODS) as [RetentionPeriod, number][]).find(([, d]) => d >= days)
  return found ? found[0] : '5y'
}

/**
 * The remote config's `sessionRecording`: false unless opted in, else the object posthog-js reads
 * (PostHog sends `sampleRate` as a string and null for "1.00", `linkedFlag` as the key or
 * `{flag, variant}`, and null for unset masking/network configs).
 */
export function toSessionRecordingConfig(s: RecordingSettings): false | Record<string, unknown> {
  if (!s.optIn) return false
  const linkedFlag = s.linkedFlag === null ? null : s.linkedFlag.variant !== null ? { flag: s.linkedFlag.key, variant: s.linkedFlag.variant } : s.linkedFlag.key
  return {
    endpoint: '/s/',
    consoleLogRecordingEnabled: s.consoleLogs,
    recorderVersion: 'v2',
    sampleRate: s.sampleRate === null || s.sampleRate === '1.00' ? null : s.sampleRate,
    minimumDurationMilliseconds: s.minimumDurationMs || null,
    linkedFlag,
    networkPayloadCapture: s.networkPayloadCapture,
    masking: s.masking,
    urlTriggers: [],
    urlBlocklist: [],
    eventTriggers: [],
    triggerMatchType: null,
    scriptConfig: null,
  }
}
