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

/** `featureFlags` with false flags, and `featureFlagPayloads` of enabled flags with a payload (v3 / legacy). */
function legacyMaps(flags: readonly FlagEvaluation[]) {
  const featureFlags: Record<string, boolean | string> = {}
  const featureFlagPayloads: Record<string, unknown> = {}
  for (const f of flags) {
    featureFlags[f.key] = f.value
    if (f.enabled && f.payload !== null && f.payload !== undefined && f.payload !== '') featureFlagPayloads[f.key] = f.payload
  }
  return { featureFlags, featureFlagPayloads }
}

/**
 * The flag part of a /decide answer by API version (PostHog's `get_decide`):
 * v1 a list of enabled keys; v2 `{key: true|variant}` of enabled flags; v3 all flags, payloads and
 * the error flag (both the spec's `errorComputingFlags` and PostHog's `errorsWhileComputingFlags`,
 * which the SDKs read); v4 and later the detailed `flags` map.
 */
export function decideFlagFields(version: number, result: DecideResult) {
  const enabled = result.flags.filter((f) => f.enabled)
  if (version <= 1) return { featureFlags: enabled.map((f) => f.key) }
  if (version === 2) return { featureFlags: Object.fromEntries(enabled.map((f) => [f.key, f.value])) }
  const errors = { errorsWhileComputingFlags: result.errors, errorComputingFlags: result.errors }
  if (version === 3) return { ...legacyMaps(result.flags), ...errors }
  return { flags: Object.fromEntries(result.flags.map((f) => [f.key, flagDetail(f)])), ...errors }
}

/**
 * The flag part of a /flags answer (PostHog's Rust service): v2+ the detailed `flags` map, plus the
 * legacy `featureFlagPayloads` (posthog-js's `getRemoteConfigPayload` reads it); v1 the legacy shape.
 */
export function flagsFlagFields(version: number, result: DecideResult) {
  const legacy = legacyMaps(result.flags)
  if (version < 2) return { errorsWhileComputingFlags: result.errors, ...legacy }
  return {
    errorsWhileComputingFlags: result.errors,
    flags: Object.fromEntries(result.flags.map((f) => [f.key, flagDetail(f)])),
    featureFlagPayloads: legacy.featureFlagPayloads,
  }
}
