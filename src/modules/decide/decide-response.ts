import type { FlagEvaluation } from '../../domain/flags/flag-types.ts'
import type { DecideResult } from './decide-service.ts'

/** Where posthog-js should send events (`analytics.endpoint`). */
export const ANALYTICS_ENDPOINT = '/i/v0/e/'

/** posthog-js reads `supportedCompression` to pick its encoding; `gzip-js` keeps it compressing. */
export const SUPPORTED_COMPRESSION = ['gzip', 'gzip-js', 'lz64']

/**
 * The remote-config part of /decide and `/flags?config=true` (and of `/array/<token>/config`): what
 * posthog-js reads first. Session recording, surveys, heatmaps stay off until Tally has them.
 */
export function remoteConfigFields(hasFeatureFlags: boolean) {
  return {
    config: { enable_collect_everything: true },
    editorParams: {},
    toolbarParams: {},
    isAuthenticated: false,
    supportedCompression: SUPPORTED_COMPRESSION,
    hasFeatureFlags,
    sessionRecording: false,
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

/** The JSON members one flag contributes to the answers, each `"key":value`. */
interface Fragments {
  /** `featureFlags[key]`: false, true or the variant. */
  value: string
  /** v1 `/decide` list entry: the JSON string of the key. */
  key: string
  /** `flags[key]`: the detailed v2 entry. */
  detail: string
  /** `featureFlagPayloads[key]`, or null when the flag is off or has no payload. */
  payload: string | null
}

// The engine hands out one frozen FlagEvaluation per flag outcome (compiled with the flag state),
// so the fragments are built once per outcome and dropped with the state when flags change.
const fragmentCache = new WeakMap<FlagEvaluation, Fragments>()

function fragmentsOf(f: FlagEvaluation): Fragments {
  let fragments = fragmentCache.get(f)
  if (fragments === undefined) {
    const key = JSON.stringify(f.key)
    const hasPayload = f.enabled && f.payload !== null && f.payload !== undefined && f.payload !== ''
    fragments = {
      key,
      value: `${key}:${JSON.stringify(f.value)}`,
      detail: `${key}:${JSON.stringify(flagDetail(f))}`,
      payload: hasPayload ? `${key}:${JSON.stringify(f.payload)}` : null,
    }
    fragmentCache.set(f, fragments)
  }
  return fragments
}

type Part = 'value' | 'key' | 'detail' | 'payload'

/** A JSON object (or array) of the chosen fragment of each flag, skipping absent ones. */
function joined(flags: readonly FlagEvaluation[], part: Part, open: string, close: string, onlyEnabled = false): string {
  let out = open
  let first = true
  for (const f of flags) {
    if (onlyEnabled && !f.enabled) continue
    const fragment = fragmentsOf(f)[part]
    if (fragment === null) continue
    out += first ? fragment : `,${fragment}`
    first = false
  }
  return out + close
}

const configJson = [false, true].map((b) => JSON.stringify(remoteConfigFields(b)).slice(1, -1) + ',')

/** The remote-config members (without braces, with a trailing comma), or '' without config. */
export function remoteConfigMembers(hasFeatureFlags: boolean | null): string {
  return hasFeatureFlags === null ? '' : configJson[hasFeatureFlags ? 1 : 0]
}

/**
 * The /decide answer by API version (PostHog's `get_decide`), as a JSON string: v1 a list of
 * enabled keys; v2 `{key: true|variant}` of enabled flags; v3 all flags, payloads and the error
 * flag (both the spec's `errorComputingFlags` and PostHog's `errorsWhileComputingFlags`, which the
 * SDKs read); v4 and later the detailed `flags` map. `config` comes from {@link remoteConfigMembers}.
 */
export function decideBody(version: number, result: DecideResult, config: string, requestId: string): string {
  const tail = `,"requestId":${JSON.stringify(requestId)}}`
  if (version <= 1) return `{${config}"featureFlags":${joined(result.flags, 'key', '[', ']', true)}${tail}`
  if (version === 2) return `{${config}"featureFlags":${joined(result.flags, 'value', '{', '}', true)}${tail}`
  const errors = `"errorsWhileComputingFlags":${result.errors},"errorComputingFlags":${result.errors}`
  if (version === 3) {
    return `{${config}"featureFlags":${joined(result.flags, 'value', '{', '}')},"featureFlagPayloads":${joined(result.flags, 'payload', '{', '}')},${errors}${tail}`
  }
  return `{${config}"flags":${joined(result.flags, 'detail', '{', '}')},${errors}${tail}`
}

/**
 * The /flags answer (PostHog's Rust service) as a JSON string: v2+ the detailed `flags` map plus the
 * legacy `featureFlagPayloads` (posthog-js's `getRemoteConfigPayload` reads it); v1 the legacy shape.
 */
export function flagsBody(version: number, result: DecideResult, config: string, requestId: string, evaluatedAt: number): string {
  const map = version < 2 ? `"featureFlags":${joined(result.flags, 'value', '{', '}')}` : `"flags":${joined(result.flags, 'detail', '{', '}')}`
  const payloads = joined(result.flags, 'payload', '{', '}')
  return `{${config}"errorsWhileComputingFlags":${result.errors},${map},"featureFlagPayloads":${payloads},"requestId":${JSON.stringify(requestId)},"evaluatedAt":${evaluatedAt}}`
}
