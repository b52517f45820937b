import { PROPERTY_KIND } from '../../domain/definitions/index.ts'
import { readBool, readChoice, readInt, readString } from '../../http/drf-fields.ts'
import { validationError } from '../../shared/errors.ts'
import type { EventDefinitionOrder, EventDefinitionQuery, PropertyDefinitionQuery } from './definition-types.ts'

type Query = Record<string, unknown>

const EVENT_TYPES = ['event', 'event_custom', 'event_posthog'] as const
const EVENT_ORDERS: readonly EventDefinitionOrder[] = ['name', '-name', 'last_seen_at', '-last_seen_at', 'created_at', '-created_at']
const PROPERTY_TYPES = ['event', 'person', 'group'] as const

/** A query parameter as DRF's QueryDict.get reads it: the last of repeated values; absent or blank is undefined. */
function param(q: Query, key: string): string | undefined {
  const raw = q[key]
  const v = Array.isArray(raw) ? raw[raw.length - 1] : raw
  return typeof v === 'string' && v !== '' ? v : undefined
}

/** PostHog's search: whitespace-separated words, each of which must appear in the name. */
const words = (search: string | undefined) => (search ?? '').split(/\s+/).filter((w) => w !== '')

function optionalBool(q: Query, key: string): boolean | null {
  const v = param(q, key)
  return v === undefined ? null : readBool(v, key)
}

/** A JSON-encoded list of strings (how PostHog's web app sends `event_names` and `excluded_properties`). */
function jsonNames(q: Query, key: string): string[] | null {
  const v = param(q, key)
  if (v === undefined) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(v)
  } catch {
    throw validationError(key, 'Value must be valid JSON.', 'invalid')
  }
  if (!Array.isArray(parsed)) throw validationError(key, `Expected a list of items but got type "${typeof parsed}".`, 'not_a_list')
  return parsed.map((item, i) => readString(item, `${key}__${i}`, { allowBlank: true, trim: false })!)
}

/** `GET event_definitions/` filters: `search`, `event_type`, `ordering`. */
export function parseEventDefinitionQuery(q: Query): EventDefinitionQuery {
  const eventType = param(q, 'event_type')
  const ordering = param(q, 'ordering')
  return {
    search: words(param(q, 'search')),
    eventType: eventType === undefined ? 'event' : readChoice(eventType, 'event_type', EVENT_TYPES)!,
    ordering: ordering === undefined ? 'name' : readChoice(ordering, 'ordering', EVENT_ORDERS)!,
  }
}

/**
 * `GET property_definitions/` filters as PostHog's PropertyDefinitionQuerySerializer reads them:
 * `type` (default event), `group_type_index` (required for group, refused otherwise), `search`,
 * `properties` (comma-separated names), `is_numerical`, `is_feature_flag`, `excluded_properties` and
 * `event_names` (JSON lists; event names only for event properties), `filter_by_event_names`.
 */
export function parsePropertyDefinitionQuery(q: Query): PropertyDefinitionQuery {
  const typeName = param(q, 'type') === undefined ? 'event' : readChoice(param(q, 'type'), 'type', PROPERTY_TYPES)!
  const rawIndex = param(q, 'group_type_index')
  if (typeName === 'group' && rawIndex === undefined) throw validationError('group_type_index', '`group_type_index` must be set for `group` type', 'invalid_input')
  if (typeName !== 'group' && rawIndex !== undefined) throw validationError('group_type_index', '`group_type_index` can only set for `group` type', 'invalid_input')
  const groupTypeIndex = rawIndex === undefined ? null : readInt(rawIndex, 'group_type_index', { min: 0, max: 4 })
  const eventNames = jsonNames(q, 'event_names')
  if (typeName !== 'event' && eventNames !== null && eventNames.length > 0) {
    throw validationError('event_names', '`event_names` can only be set for `event` type', 'invalid_input')
  }
  const names = param(q, 'properties')
  return {
    type: PROPERTY_KIND[typeName],
    groupTypeIndex,
    search: words(param(q, 'search')),
    names: names === undefined ? null : names.split(','),
    isNumerical: optionalBool(q, 'is_numerical'),
    isFeatureFlag: optionalBool(q, 'is_feature_flag'),
    excluded: jsonNames(q, 'excluded_properties') ?? [],
    excludeCoreProperties: optionalBool(q, 'exclude_core_properties') ?? false,
    eventNames: eventNames !== null && eventNames.length > 0 ? eventNames : null,
    filterByEventNames: optionalBool(q, 'filter_by_event_names') ?? false,
  }
}

/** `seen_together`: `event_names` (repeated, required) and `property_name` (required). */
export function parseSeenTogetherQuery(q: Query): { eventNames: string[]; property: string } {
  const raw = q.event_names
  const list = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v): v is string => typeof v === 'string')
  if (list.length === 0) throw validationError('event_names', 'This field is required.', 'required')
  const property = param(q, 'property_name')
  if (property === undefined) throw validationError('property_name', 'This field is required.', 'required')
  return { eventNames: list, property }
}
