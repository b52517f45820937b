import { decidePersonProperties, type GeoIpLookup } from '../../domain/geoip/geoip-properties.ts'
import { AppError, validationError } from '../../shared/errors.ts'

/** The fields of a /decide or /flags body, aliases resolved (Rust `flag_request.rs` + Python decide). */
export interface DecideRequest {
  token: string | null
  /** `project_id` sent with a personal API key instead of a project token. */
  projectId: string | null
  distinctId: string
  groups: Record<string, string | number>
  personProperties: Record<string, unknown>
  groupProperties: Record<string, Record<string, unknown>>
  anonDistinctId: string | null
  deviceId: string | null
  flagKeys: string[] | null
  disableFlags: boolean
  /** `geoip_disable`: no `$geoip_*` person properties from the request's address (posthog-node sends true). */
  geoipDisable: boolean
}

const MAX_DISTINCT_ID = 200

const objectOr = <T>(v: unknown, fallback: T): T => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as T) : fallback)
const stringOrNull = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null)

/** Where PostHog finds the project token: query, form, then body (`$token`, `token`, `api_key`). */
export function readToken(body: Record<string, unknown>, form: Record<string, string>, query: Record<string, unknown>): string | null {
  for (const v of [query.token, query.api_key, form.api_key, form.token, body.$token, body.token, body.api_key]) {
    if (typeof v === 'string' && v.trim() !== '') return v.trim()
  }
  const props = objectOr<Record<string, unknown>>(body.properties, {})
  return typeof props.token === 'string' && props.token !== '' ? props.token : null
}

/** Reads a decoded body into a DecideRequest; a missing `distinct_id` is PostHog's 400 `missing_distinct_id`. */
export function readDecideRequest(
  payload: unknown,
  form: Record<string, string> = {},
  query: Record<string, unknown> = {},
): { request: DecideRequest | null; token: string | null; projectId: string | null } {
  const body = objectOr<Record<string, unknown>>(payload, {})
  const token = readToken(body, form, query)
  const projectId = stringOrNull(body.project_id ?? query.project_id ?? form.project_id)
  const rawId = body.distinct_id ?? body.$distinct_id
  if (rawId === undefined || rawId === null) return { request: null, token, projectId }
  const distinctId = (typeof rawId === 'string' ? rawId : JSON.stringify(rawId)).slice(0, MAX_DISTINCT_ID)
  const personProperties = objectOr<Record<string, unknown>>(body.person_properties ?? body.$properties, {})
  const flagKeys = body.flag_keys_to_evaluate ?? body.flag_keys
  return {
    token,
    projectId,
    request: {
      token,
      projectId,
      distinctId,
      groups: objectOr(body.groups ?? body.$groups, {}),
      personProperties,
      groupProperties: objectOr(body.group_properties ?? body.$group_properties, {}),
      anonDistinctId: stringOrNull(body.$anon_distinct_id ?? body.anon_distinct_id ?? personProperties.$anon_distinct_id),
      deviceId: stringOrNull(body.$device_id ?? body.device_id),
      flagKeys: Array.isArray(flagKeys) ? flagKeys.filter((k): k is string => typeof k === 'string') : null,
      disableFlags: body.disable_flags === true || body.disable_flags === 'true',
      geoipDisable: body.geoip_disable === true || body.geoip_disable === 'true',
    },
  }
}

export const noApiKey = () =>
  new AppError('invalid_api_key', 'No project API key provided. You can find your project API key in PostHog project settings.', null, {
    subCode: 'no_api_key',
  })
export const invalidApiKey = () =>
  new AppError('invalid_api_key', 'Project API key invalid. You can find your project API key in PostHog project settings.')
export const invalidPersonalKey = () => new AppError('invalid_personal_api_key', 'Invalid Personal API key.', null, { subCode: 'invalid_personal_key' })
export const missingDistinctId = () => validationError(null, 'Decide requires a distinct_id.', 'missing_distinct_id')

/**
 * The person properties flags are evaluated with: the location of the caller's address under the
 * supplied ones (PostHog's decide; supplied properties win, except a supplied null `$geoip_*` value,
 * which the location fills, as PostHog's Rust service does).
 */
export async function withGeoIpPersonProperties(geoip: GeoIpLookup, ip: string, supplied: Record<string, unknown>): Promise<Record<string, unknown>> {
  await geoip.prepare([ip])
  const location = geoip.locate(ip)
  if (location === null) return supplied
  const geo = decidePersonProperties(location)
  const merged: Record<string, unknown> = { ...geo, ...supplied }
  for (const [key, value] of Object.entries(geo)) if (merged[key] === null) merged[key] = value
  return merged
}
