import type { EventRow } from './event-read-store.ts'
import { toEventPersonJson } from '../persons/person-json.ts'
import type { Person } from '../persons/person-types.ts'
import { parseElementsChain } from '../../domain/events/parse-elements-chain.ts'

/**
 * An event as PostHog's events API returns it (`ClickhouseEventSerializer`): `id` is the uuid,
 * `timestamp` ISO-8601 with microseconds and `+00:00`, `person` the current person of the event's
 * distinct id (null when it has none, e.g. deleted or personless); `elements` the chain read as PostHog
 * reads it (`chain_to_elements`), beside the chain itself in `elements_chain`.
 */
export function toEventJson(row: EventRow, person?: Person) {
  return {
    id: row.uuid,
    distinct_id: row.distinctId,
    properties: JSON.parse(row.properties) as Record<string, unknown>,
    event: row.event,
    timestamp: formatMicros(row.timestampMicros),
    person: person ? toEventPersonJson(person) : null,
    elements: parseElementsChain(row.elementsChain),
    elements_chain: row.elementsChain,
  }
}

/** `2024-05-01T12:00:00.123456+00:00` from microseconds since the epoch. */
export function formatMicros(micros: bigint): string {
  const ms = Number(micros / 1000n) - (micros % 1000n < 0n ? 1 : 0)
  const sub = ((micros % 1000n) + 1000n) % 1000n
  const iso = new Date(ms).toISOString() // 2024-05-01T12:00:00.123Z
  return `${iso.slice(0, 23)}${sub.toString().padStart(3, '0')}+00:00`
}
