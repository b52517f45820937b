import type { FlagEvaluation } from '../../domain/flags/flag-types.ts'
import type { DecideResult } from './decide-service.ts'
import { toSessionRecordingConfig, type RecordingSettings } from '../../domain/replay/recording-settings.ts'

/** Where posthog-js should send events (`analytics.endpoint`). */
export const ANALYTICS_ENDPOINT = '/i/v0/e/'

/** posthog-js reads `supportedCompression` to pick its encoding; `gzip-js` keeps it compressing. */
export const SUPPORTED_COMPRESSION = ['gzip', 'gzip-js', 'lz64']

/**
 * The remote-config part of /decide and `/flags?config=true` (and of `/array/<token>/config`): what
 * posthog-js reads first. `sessionRecording` comes from the project's replay settings; surveys and
 * heatmaps stay off until Tally has them.
 */
export function remoteConfigFields(hasFeatureFlags: boolean, sessionRecording: false | Record<string, unknown> = false) {
  return {
    config: { enable_collect_everything: true },
    editorParams: {},
    toolbarParams: {},
    isAuthenticated: false,
    supportedCompression: SUPPORTED_COMPRESSION,
    hasFeatureFlags,
    sessionRecording,
    captureDeadClicks: false,
    capturePerformance: false,
    autocapture_opt_out: false,
    autocaptureExceptions: false,
    analytics: { endpoint: ANALYTICS_ENDPOINT },
    elementsChainAsString: true,
    surveys: false,
    heatmaps: false,
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
const COMMA = Buffer.from(',')
const OPEN = { '{': Buffer.from('{'), '[': Buffer.from('[') }
const CLOSE = { '}': Buffer.from('}'), ']': Buffer.from(']') }

/** Collects the pieces of one answer and joins them once. */
class JsonBody {
  private readonly parts: Buffer[] = []
  private length = 0
  add(piece: Buffer | string): this {
    const b = typeof piece === 'string' ? Buffer.from(piece) : piece
    this.parts.push(b)
    this.length += b.length
    return this
  }
  /** A JSON object (or array) of the chosen fragment of each flag, skipping absent ones. */
  flags(flags: readonly FlagEvaluation[], part: Part, open: '{' | '[', onlyEnabled = false): this {
    this.add(OPEN[open])
    let first = true
    for (const f of flags) {
      if (onlyEnabled && !f.enabled) continue
      const fragment = fragmentsOf(f)[part]
      if (fragment === null) continue
      if (!first) this.add(COMMA)
      this.add(fragment)
      first = false
    }
    return this.add(open === '{' ? CLOSE['}'] : CLOSE[']'])
  }
  done(): Buffer {
    return Buffer.concat(this.parts, this.length)
  }
}

const configJson = [false, true].map((b) => Buffer.from(`{${JSON.stringify(remoteConfigFields(b)).slice(1, -1)},`))
const NO_CONFIG = Buffer.from('{')

// Per project settings: the opening is built once per settings object (a PATCH replaces the object).
const recordingOpenings = new WeakMap<RecordingSettings, Buffer[]>()

/**
 * The opening of an answer: `{` and the remote-config members when asked for (`null`: not asked),
 * with `sessionRecording` from the project's replay settings when given and opted in.
 */
export function remoteConfigMembers(hasFeatureFlags: boolean | null, recording?: RecordingSettings): Buffer {
  if (hasFeatureFlags === null) return NO_CONFIG
  if (!recording?.optIn) return configJson[hasFeatureFlags ? 1 : 0]
  let built = recordingOpenings.get(recording)
  if (!built) {
    const config = toSessionRecordingConfig(recording)
    built = [false, true].map((b) => Buffer.from(`{${JSON.stringify(remoteConfigFields(b, config)).slice(1, -1)},`))
    recordingOpenings.set(recording, built)
  }
  return built[hasFeatureFlags ? 1 : 0]
}

/**
 * The /decide answer by API version (PostHog's `get_decide`), as UTF-8 JSON: v1 a list of enabled
 * keys; v2 `{key: true|variant}` of enabled flags; v3 all flags, payloads and the error flag (both
 * the spec's `errorComputingFlags` and PostHog's `errorsWhileComputingFlags`, which the SDKs read);
 * v4 and later the detailed `flags` map. `opening` comes from {@link remoteConfigMembers}.
 */
export function decideBody(version: number, result: DecideResult, opening: Buffer, requestId: string): Buffer {
  const body = new JsonBody().add(opening)
  const errors = `"errorsWhileComputingFlags":${result.errors},"errorComputingFlags":${result.errors}`
  if (version <= 1) body.add('"featureFlags":').flags(result.flags, 'key', '[', true)
  else if (version === 2) body.add('"featureFlags":').flags(result.flags, 'value', '{', true)
  else if (version === 3) {
    body.add('"featureFlags":').flags(result.flags, 'value', '{').add(',"featureFlagPayloads":').flags(result.flags, 'payload', '{')
    body.add(`,${errors}`)
  } else body.add('"flags":').flags(result.flags, 'detail', '{').add(`,${errors}`)
  return body.add(`,"requestId":${JSON.stringify(requestId)}}`).done()
}

/**
 * The /flags answer (PostHog's Rust service) as UTF-8 JSON: v2+ the detailed `flags` map plus the
 * legacy `featureFlagPayloads` (posthog-js's `getRemoteConfigPayload` reads it); v1 the legacy shape.
 */
export function flagsBody(version: number, result: DecideResult, opening: Buffer, requestId: string, evaluatedAt: number): Buffer {
  const body = new JsonBody().add(opening).add(`"errorsWhileComputingFlags":${result.errors},`)
  if (version < 2) body.add('"featureFlags":').flags(result.flags, 'value', '{')
  else body.add('"flags":').flags(result.flags, 'detail', '{')
  body.add(',"featureFlagPayloads":').flags(result.flags, 'payload', '{')
  return body.add(`,"requestId":${JSON.stringify(requestId)},"evaluatedAt":${evaluatedAt}}`).done()
}
