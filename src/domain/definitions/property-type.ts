/** The property types PostHog detects and shows in its pickers (`PropertyType` of posthog/models/property_definition.py). */
export type PropertyType = 'String' | 'Numeric' | 'Boolean' | 'DateTime'

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/
// Unix times between 1980 and 2100, in seconds or milliseconds.
const EARLIEST_S = 315_532_800
const LATEST_S = 4_102_444_800

function isIsoDateTime(value: string): boolean {
  return ISO_DATE.test(value) && !Number.isNaN(Date.parse(value.length === 10 ? value : value.replace(' ', 'T')))
}

function isUnixTime(value: number): boolean {
  return (value >= EARLIEST_S && value <= LATEST_S) || (value >= EARLIEST_S * 1000 && value <= LATEST_S * 1000)
}

/**
 * The type of a property as PostHog's ingestion detects it from one value (plugin-server's
 * `detectPropertyDefinitionTypes`): `utm_*` are always String; a number is Numeric unless the key
 * names a time and the value is a plausible unix time (DateTime); `true`/`false`, as booleans or as
 * text, are Boolean; an ISO-8601 date or date-time string is DateTime; other text is String.
 * Objects, lists and null have no type (null).
 */
export function detectPropertyType(key: string, value: unknown): PropertyType | null {
  if (/^utm_/i.test(key)) return 'String'
  switch (typeof value) {
    case 'number':
      if (!Number.isFinite(value)) return null
      return /time|timestamp/i.test(key) && isUnixTime(value) ? 'DateTime' : 'Numeric'
    case 'boolean':
      return 'Boolean'
    case 'string': {
      const text = value.trim()
      if (/^(true|false)$/i.test(text)) return 'Boolean'
      return isIsoDateTime(text) ? 'DateTime' : 'String'
    }
    default:
      return null
  }
}
