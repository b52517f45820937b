import type { PropertyGroup } from '../properties/property-filter.ts'

/**
 * A dynamic cohort's definition as the query engine reads it: `filters.properties`, or else the
 * legacy `groups` list (still accepted by PostHog's API and sent by older clients), converted as
 * PostHog's `Cohort.properties` converts it: an OR of one AND group per legacy group, where
 * - `properties` as a list are person properties (an `event` type, or none, counts as `person`);
 * - `properties` as a `{key: value}` object are exact person property matches;
 * - `action_id`/`event_id` is a behavioural `performed_event` in the last `days` (365) days, or
 *   `performed_event_multiple` with `count_operator` and `count` when a count is given.
 * A group of none of these makes the cohort match nobody (PostHog's "invalid state"). Null when
 * the cohort has neither.
 */
export function cohortProperties(filters: { properties?: unknown } | null | undefined, groups: readonly unknown[] | null | undefined): PropertyGroup | null {
  const properties = filters?.properties as PropertyGroup | undefined
  if (properties && Array.isArray(properties.values)) return properties
  if (!groups || groups.length === 0) return null
  const converted: PropertyGroup[] = []
  for (const raw of groups) {
    const group = (raw ?? {}) as Record<string, unknown>
    const props = group.properties
    if (Array.isArray(props) && props.length > 0) {
      const values = props.map((p) => {
        const prop = (p ?? {}) as Record<string, unknown>
        return (prop.type ?? 'event') === 'event' ? { ...prop, type: 'person' } : prop
      })
      converted.push({ type: 'AND', values } as unknown as PropertyGroup)
    } else if (props && typeof props === 'object' && !Array.isArray(props) && !('type' in props) && !('values' in props) && Object.keys(props).length > 0) {
      const values = Object.entries(props).map(([key, value]) => ({ key, value, type: 'person', operator: 'exact' }))
      converted.push({ type: 'AND', values } as unknown as PropertyGroup)
    } else if (group.action_id || group.event_id) {
      const count = Math.max(0, Number.parseInt(String(group.count ?? 0), 10) || 0)
      const criterion: Record<string, unknown> = {
        key: group.action_id ?? group.event_id,
        type: 'behavioral',
        value: count ? 'performed_event_multiple' : 'performed_event',
        event_type: group.action_id ? 'actions' : 'events',
        time_interval: 'day',
        time_value: Number(group.days) || 365,
      }
      if (count) Object.assign(criterion, { operator: group.count_operator ?? 'eq', operator_value: count })
      converted.push({ type: 'AND', values: [criterion] } as unknown as PropertyGroup)
    } else {
      return { type: 'OR', values: [] } as PropertyGroup
    }
  }
  return { type: 'OR', values: converted } as PropertyGroup
}
