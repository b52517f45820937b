import type { Person } from './person-types.ts'

// PostHog's PERSON_DEFAULT_DISPLAY_NAME_PROPERTIES (posthog/api/person.py), in its order.
const DISPLAY_NAME_PROPERTIES = ['email', 'Email', '$email', 'name', 'Name', 'username', 'Username', 'UserName']
const UUID_LIKE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i

/**
 * Distinct ids as PostHog lists them: ids that look like UUIDs (anonymous, `is_anonymous_id`) after
 * the others, so an identified id comes first; alphabetical within each kind (a stable order).
 */
export function sortedDistinctIds(ids: readonly string[]): string[] {
  return [...ids].sort((a, b) => Number(UUID_LIKE.test(a)) - Number(UUID_LIKE.test(b)) || (a < b ? -1 : a > b ? 1 : 0))
}

/** PostHog's `get_person_name`: the first display-name property set, else the first distinct id, else the pk. */
export function personName(p: Person): string {
  for (const key of DISPLAY_NAME_PROPERTIES) {
    const v = p.properties[key]
    if (v !== undefined && v !== null && v !== '' && v !== false && v !== 0) return typeof v === 'string' ? v : JSON.stringify(v)
  }
  return sortedDistinctIds(p.distinctIds)[0] ?? String(p.id)
}

/**
 * A person as PostHog's persons list and actor endpoints return it (`get_serialized_people`): `id`
 * is the uuid, with `type: "person"` and `is_identified`.
 */
export function toPersonJson(p: Person) {
  return {
    type: 'person' as const,
    id: p.uuid,
    uuid: p.uuid,
    name: personName(p),
    distinct_ids: sortedDistinctIds(p.distinctIds),
    properties: p.properties,
    is_identified: p.isIdentified,
    created_at: p.createdAt.toISOString(),
  }
}

/** A person as PostHog's `PersonSerializer` returns one (retrieve): `id` is the numeric pk. */
export function toPersonDetailJson(p: Person) {
  return {
    id: p.id,
    name: personName(p),
    distinct_ids: sortedDistinctIds(p.distinctIds),
    properties: p.properties,
    created_at: p.createdAt.toISOString(),
    uuid: p.uuid,
  }
}

/**
 * An event's `person` as PostHog's events API gives it (`ClickhouseEventSerializer.get_person`):
 * the first distinct id only and the email/name/username properties only, to keep pages small.
 */
export function toEventPersonJson(p: Person) {
  const properties: Record<string, unknown> = {}
  for (const key of ['email', 'name', 'username']) if (key in p.properties) properties[key] = p.properties[key]
  return {
    uuid: p.uuid,
    is_identified: p.isIdentified,
    distinct_ids: sortedDistinctIds(p.distinctIds).slice(0, 1),
    properties,
  }
}
