import type { NormalisedEvent } from '../domain/events/index.ts'
import type { StoredEvent } from './event-store.ts'
import { summariseProperties } from './step-properties.ts'

/**
 * The queue message for one accepted event: a compact JSON header, a tab, then the properties as
 * JSON text. Capture serialises the properties once; the worker hands that text to the event store
 * without parsing it again (JSON never holds a raw tab or newline, so the split is unambiguous).
 * Header: [uuid, projectId, event, distinctId, timestampMs, createdAtMs, elementsChain,
 * stepProperties, shape]: the last two are what the steps read of the properties (step-properties.ts).
 * Messages of the previous format (a backlog from before an upgrade, dead letters) have the first
 * seven only; the steps then parse their properties.
 */
export function encodeQueuedEvent(projectId: number, e: NormalisedEvent): string {
  const { head, tail } = encodeQueuedEventParts(e)
  return head + projectId + tail
}

/**
 * The queue message of an event whose project is not known yet, in two parts:
 * `head + projectId + tail` is `encodeQueuedEvent(projectId, e)`. Capture's decode threads encode
 * before the main thread has resolved the request's project.
 */
export function encodeQueuedEventParts(e: NormalisedEvent): { head: string; tail: string } {
  const { stepProperties, shape } = summariseProperties(e.properties)
  const rest = JSON.stringify([e.event, e.distinctId, e.timestamp.getTime(), e.createdAt.getTime(), e.elementsChain, stepProperties, shape])
  return {
    head: `[${JSON.stringify(e.uuid)},`,
    tail: `,${rest.slice(1)}\t${JSON.stringify(e.properties)}`,
  }
}

/** Reads a queue message (this format or the previous one) back into the row the event store writes. Throws on a malformed message. */
export function decodeQueuedEvent(message: string): StoredEvent {
  const tab = message.indexOf('\t')
  if (tab < 0) throw new Error('queued event has no properties part')
  const h = JSON.parse(message.slice(0, tab)) as unknown[]
  const properties = message.slice(tab + 1)
  if (
    !Array.isArray(h) ||
    (h.length !== 7 && h.length !== 9) ||
    typeof h[0] !== 'string' ||
    typeof h[1] !== 'number' ||
    typeof h[2] !== 'string' ||
    typeof h[3] !== 'string' ||
    typeof h[4] !== 'number' ||
    typeof h[5] !== 'number' ||
    typeof h[6] !== 'string' ||
    (h.length === 9 && (!isObject(h[7]) || typeof h[8] !== 'number')) ||
    properties.charCodeAt(0) !== 0x7b // '{'
  ) {
    throw new Error('queued event header is malformed')
  }
  return {
    uuid: h[0],
    projectId: h[1],
    event: h[2],
    distinctId: h[3],
    timestamp: new Date(h[4]),
    createdAt: new Date(h[5]),
    elementsChain: h[6],
    properties,
    parsed: undefined,
    stepProperties: h.length === 9 ? (h[7] as Record<string, unknown>) : undefined,
    shape: h.length === 9 ? (h[8] as number) : undefined,
    personId: null,
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}
