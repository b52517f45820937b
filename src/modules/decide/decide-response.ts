import type { FlagEvaluation } from '../../domain/flags/flag-types.ts'
import type { DecideResult } from './decide-service.ts'
import { DEFAULT_SDK_SETTINGS, type SdkSettings } from '../projects/project-settings.ts'
import { DEFAULT_RECORDING_SETTINGS, toSessionRecordingConfig, type RecordingSettings } from '../../domain/replay/recording-settings.ts'

/** Where posthog-js should send events (`analytics.endpoint`). */
export const ANALYTICS_ENDPOINT = '/i/v0/e/'

/** posthog-js reads `supportedCompression` to pick its encoding; `gzip-js` keeps it compressing. */
export const SUPPORTED_COMPRESSION = ['gzip', 'gzip-js', 'lz64']

/** Which answer the remote config goes into: legacy `/decide`, or `/flags?config` and `/array/<token>/config`. */
export type ConfigForm = 'decide' | 'remote'

/**
 * The remote-config part of /decide and `/flags?config=true` (and of `/array/<token>/config`): what
 * posthog-js reads first, with the product switches from the project's settings as PostHog builds
 * them (`posthog/api/decide.py` get_base_config for /decide, `posthog/models/remote_config.py`
 * build_config for the others): exception autocapture is `{endpoint: "/e/"}` in /decide and a
 * boolean plus `errorTracking` in remote config; `capturePerformance` is an object when network timing
 * or web vitals are on, else false. `sessionRecording` comes from the project's replay settings; surveys stay off until Tally has them.
 */
export function remoteConfigFields(
  hasFeatureFlags: boolean,
  settings: SdkSettings = DEFAULT_SDK_SETTINGS,
  form: ConfigForm = 'remote',
  sessionRecording: false | Record<string, unknown> = false,
) {
  const exceptions = settings.autocapture_exceptions_opt_in === true
  const networkTiming = settings.capture_performance_opt_in === true
  const webVitals = settings.autocapture_web_vitals_opt_in === true
  return {
    config: { enable_collect_everything: true },
    editorParams: {},
    toolbarParams: {},
    isAuthenticated: false,
    supportedCompression: SUPPORTED_COMPRESSION,
    hasFeatureFlags,
    sessionRecording,
    captureDeadClicks: settings.capture_dead_clicks === true,
    capturePerformance: networkTiming || webVitals ? { network_timing: networkTiming, web_vitals: webVitals, web_vitals_allowed_metrics: null } : false,
    autocapture_opt_out: settings.autocapture_opt_out === true,
    autocaptureExceptions: form === 'decide' ? (exceptions ? { endpoint: '/e/' } : false) : exceptions,
    ...(form === 'remote' && { errorTracking: { autocaptureExceptions: exceptions, suppressionRules: [] } }),
    analytics: { endpoint: ANALYTICS_ENDPOINT },
    elementsChainAsString: true,
    surveys: false,
    heatmaps: settings.heatmaps_opt_in === true,
    defaultIdentifiedOnly: true,
    siteApps: [],
  }
}

/** A stored payload as the v2 `metadata.payload` carries it: a JSON-encoded string (or null). */
function payloadString(payload: unknown): string | null {
  if (payload === null || payload === undefined) return null
  return typeof payload === 'string' ? payload : JSON.stringify(payload)
}

function flagDetail(f: FlagEvaluation) {
  return {
    key: f.key,
    enabled: f.enabled,
    variant: f.variant,
    reason: { code: f.reason.code, condition_index: f.reason.conditionIndex, description: f.reason.description },
    metadata: { id: f.flagId, version: f.version, description: null, payload: payloadString(f.payload) },
    ...(f.errored ? { failed: true } : {}),
  }
}

/** The UTF-8 JSON members one flag contributes to the answers, each `"key":value`. */
interface Fragments {
  /** `featureFlags[key]`: false, true or the variant. */
  value: Buffer
  /** v1 `/decide` list entry: the JSON string of the key. */
  key: Buffer
  /** `flags[key]`: the detailed v2 entry. */
  detail: Buffer
  /** `featureFlagPayloads[key]`, or null when the flag is off or has no payload. */
  payload: Buffer | null
}

// The engine hands out one frozen FlagEvaluation per flag outcome (compiled with the flag state),
// so the fragments are built once per outcome and dropped with the state when flags change.
// They are kept encoded: an answer is one Buffer.concat, with no string to flatten, measure and
// encode again on the way out (~10 KB for 50 flags).
const fragmentCache = new WeakMap<FlagEvaluation, Fragments>()

function fragmentsOf(f: FlagEvaluation): Fragments {
  let fragments = fragmentCache.get(f)
  if (fragments === undefined) {
    const key = JSON.stringify(f.key)
    const hasPayload = f.enabled && f.payload !== null && f.payload !== undefined && f.payload !== ''
    fragments = {
      key: Buffer.from(key),
      value: Buffer.from(`${key}:${JSON.stringify(f.value)}`),
      detail: Buffer.from(`${key}:${JSON.stringify(flagDetail(f))}`),
      payload: hasPayload ? Buffer.from(`${key}:${JSON.stringify(f.payload)}`) : null,
    }
    fragmentCache.set(f, fragments)
  }
  return fragments
}

type Part = 'value' | 'key' | 'detail' | 'payload'
const COMMA = 0x2c
const OPEN = { '{': 0x7b, '[': 0x5b } as const
const CLOSE = { '{': 0x7d, '[': 0x5d } as const
const ascii = (text: string) => Buffer.from(text, 'latin1')
const TRUE = ascii('true')
const FALSE = ascii('false')

// Answers are cut from slabs, as Node pools small Buffers: one ArrayBuffer of 256 KB serves ~20 answers of ~10 KB (and a slow reader pins at most one slab).
const SLAB_BYTES = 1 << 18
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES)
let slabUsed = 0
function allocate(length: number): Buffer {
  if (length > SLAB_BYTES / 8) return Buffer.allocUnsafeSlow(length)
  if (slabUsed + length > SLAB_BYTES) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES)
    slabUsed = 0
  }
  const out = slab.subarray(slabUsed, slabUsed + length)
  slabUsed += (length + 7) & ~7
  return out
}

/**
 * Collects the pieces of one answer and copies them once into a Buffer of the exact length.
 * Pieces are cached Buffers (flag fragments, openings, constants) or single bytes (punctuation);
 * only the per-request scalars are encoded here. Used synchronously, one answer at a time.
 */
class JsonBody {
  private readonly parts: Array<Buffer | number> = []
  private length = 0
  add(piece: Buffer | string): this {
    const b = typeof piece === 'string' ? Buffer.from(piece) : piece
    this.parts.push(b)
    this.length += b.length
    return this
  }
  private byte(code: number): void {
    this.parts.push(code)
    this.length++
  }
  bool(value: boolean): this {
    return this.add(value ? TRUE : FALSE)
  }
  /** A JSON object (or array) of the chosen fragment of each flag, skipping absent ones. */
  flags(flags: readonly FlagEvaluation[], part: Part, open: '{' | '[', onlyEnabled = false): this {
    this.byte(OPEN[open])
    let first = true
    for (const f of flags) {
      if (onlyEnabled && !f.enabled) continue
      const fragment = fragmentsOf(f)[part]
      if (fragment === null) continue
      if (!first) this.byte(COMMA)
      this.parts.push(fragment)
      this.length += fragment.length
      first = false
    }
    this.byte(CLOSE[open])
    return this
  }
  done(): Buffer {
    const out = allocate(this.length)
    let at = 0
    for (const part of this.parts) {
      if (typeof part === 'number') out[at++] = part
      else if (part.length < 32) for (let i = 0; i < part.length; i++) out[at++] = part[i]
      else {
        out.set(part, at)
        at += part.length
      }
    }
    return out
  }
}

// The opening of an answer per settings objects (frozen, replaced on change), form and hasFeatureFlags.
const openings = new WeakMap<SdkSettings, WeakMap<RecordingSettings, Map<string, Buffer>>>()
const NO_CONFIG = Buffer.from('{')

/**
 * The opening of an answer: `{` and the remote-config members when asked for (`null`: not asked),
 * built once per project settings (SDK and replay), form and `hasFeatureFlags`.
 */
export function remoteConfigMembers(
  hasFeatureFlags: boolean | null,
  settings: SdkSettings = DEFAULT_SDK_SETTINGS,
  form: ConfigForm = 'remote',
  recording: RecordingSettings = DEFAULT_RECORDING_SETTINGS,
): Buffer {
  if (hasFeatureFlags === null) return NO_CONFIG
  let bySettings = openings.get(settings)
  if (!bySettings) openings.set(settings, (bySettings = new WeakMap()))
  let built = bySettings.get(recording)
  if (!built) bySettings.set(recording, (built = new Map()))
  const key = `${form}:${hasFeatureFlags}`
  let opening = built.get(key)
  if (!opening) {
    const fields = remoteConfigFields(hasFeatureFlags, settings, form, toSessionRecordingConfig(recording))
    opening = Buffer.from(`{${JSON.stringify(fields).slice(1, -1)},`)
    built.set(key, opening)
  }
  return opening
}

/**
 * The /decide answer by API version (PostHog's `get_decide`), as UTF-8 JSON: v1 a list of enabled
 * keys; v2 `{key: true|variant}` of enabled flags; v3 all flags, payloads and the error flag (both
 * the spec's `errorComputingFlags` and PostHog's `errorsWhileComputingFlags`, which the SDKs read);
 * v4 and later the detailed `flags` map. `opening` comes from {@link remoteConfigMembers}.
 */
export function decideBody(version: number, result: DecideResult, opening: Buffer, requestId: string): Buffer {
  const body = new JsonBody().add(opening)
  const errors = (b: JsonBody) => b.add(K.errorsWhile).bool(result.errors).add(K.errorComputing).bool(result.errors)
  if (version <= 1) body.add(K.featureFlags).flags(result.flags, 'key', '[', true)
  else if (version === 2) body.add(K.featureFlags).flags(result.flags, 'value', '{', true)
  else if (version === 3) errors(body.add(K.featureFlags).flags(result.flags, 'value', '{').add(K.payloads).flags(result.flags, 'payload', '{'))
  else errors(body.add(K.flags).flags(result.flags, 'detail', '{'))
  return body.add(`,"requestId":${JSON.stringify(requestId)}}`).done()
}

// The member names of the answers, encoded once.
const K = {
  featureFlags: ascii('"featureFlags":'),
  flags: ascii('"flags":'),
  payloads: ascii(',"featureFlagPayloads":'),
  errorsWhile: ascii(',"errorsWhileComputingFlags":'),
  errorComputing: ascii(',"errorComputingFlags":'),
  errorsFirst: ascii('"errorsWhileComputingFlags":'),
  comma: ascii(','),
}

/**
 * The /flags answer (PostHog's Rust service) as UTF-8 JSON: v2+ the detailed `flags` map plus the
 * legacy `featureFlagPayloads` (posthog-js's `getRemoteConfigPayload` reads it); v1 the legacy shape.
 */
export function flagsBody(version: number, result: DecideResult, opening: Buffer, requestId: string, evaluatedAt: number): Buffer {
  const body = new JsonBody().add(opening).add(K.errorsFirst).bool(result.errors).add(K.comma)
  if (version < 2) body.add(K.featureFlags).flags(result.flags, 'value', '{')
  else body.add(K.flags).flags(result.flags, 'detail', '{')
  body.add(K.payloads).flags(result.flags, 'payload', '{')
  return body.add(`,"requestId":${JSON.stringify(requestId)},"evaluatedAt":${evaluatedAt}}`).done()
}
