import { detectPropertyType, type PropertyType } from './property-type.ts'

/** `type` of a property definition, as PostHog numbers them. */
export const PROPERTY_KIND = { event: 1, person: 2, group: 3 } as const
export type PropertyKind = (typeof PROPERTY_KIND)[keyof typeof PROPERTY_KIND]

/** Names longer than this are not kept as definitions (PostHog's property-defs service skips them too). */
export const MAX_DEFINITION_NAME = 200

/** One event as the collector reads it: its project, name and parsed properties. */
export interface DefinitionSource {
  projectId: number
  event: string
  properties: Record<string, unknown>
  /** For `$groupidentify`: the index of its `$group_type` (undefined when unknown). */
  groupTypeIndex?: number
}

export interface SeenEvent { projectId: number; name: string }
export interface SeenProperty {
  projectId: number
  type: PropertyKind
  /** -1 unless `type` is group. */
  groupTypeIndex: number
  name: string
  /** The first type detected in the batch (null: no value had one). */
  propertyType: PropertyType | null
}
export interface SeenEventProperty { projectId: number; event: string; property: string }

/** The distinct definitions of one micro-batch. */
export interface SeenDefinitions {
  events: SeenEvent[]
  properties: SeenProperty[]
  eventProperties: SeenEventProperty[]
}

// Ingestion's instructions, not properties of the event (PostHog leaves them out of the definitions).
const NOT_EVENT_PROPERTIES = new Set(['$set', '$set_once', '$unset', '$groups', '$group_set', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4'])

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const isName = (name: string) => name !== '' && name.length <= MAX_DEFINITION_NAME

/** The key of a property definition (the table's primary key), also the step's cache key. */
export function propertyKey(p: Pick<SeenProperty, 'projectId' | 'type' | 'groupTypeIndex' | 'name'>): string {
  return `p\u0000${p.projectId}\u0000${p.type}\u0000${p.groupTypeIndex}\u0000${p.name}`
}
export const eventKey = (e: SeenEvent): string => `e\u0000${e.projectId}\u0000${e.name}`
export const eventPropertyKey = (e: SeenEventProperty): string => `x\u0000${e.projectId}\u0000${e.event}\u0000${e.property}`

/**
 * The distinct event names, event properties (with the events they were seen on), person properties
 * (the keys of `$set` and `$set_once`) and group properties (`$group_set` of `$groupidentify`) of a
 * batch, each with the first type detected. Pure and set-based: one pass, no I/O; a name already
 * typed in the batch costs one Map look-up (no key string, no detection).
 */
export function collectDefinitions(sources: Iterable<DefinitionSource>): SeenDefinitions {
  // Per project and kind (and group type index): name -> definition.
  const buckets = new Map<string, Map<string, SeenProperty>>()
  // Per project and event: the property names seen with it.
  const byEvent = new Map<string, { projectId: number; event: string; names: Set<string> }>()

  const bucketOf = (projectId: number, type: PropertyKind, groupTypeIndex: number) => {
    const key = `${projectId}\u0000${type}\u0000${groupTypeIndex}`
    let bucket = buckets.get(key)
    if (bucket === undefined) buckets.set(key, (bucket = new Map()))
    return bucket
  }
  const addProperty = (bucket: Map<string, SeenProperty>, projectId: number, type: PropertyKind, groupTypeIndex: number, name: string, value: unknown) => {
    const seen = bucket.get(name)
    if (seen !== undefined) {
      if (seen.propertyType === null) seen.propertyType = detectPropertyType(name, value)
      return
    }
    if (isName(name)) bucket.set(name, { projectId, type, groupTypeIndex, name, propertyType: detectPropertyType(name, value) })
  }

  for (const s of sources) {
    if (!isName(s.event)) continue
    const pairKey = `${s.projectId}\u0000${s.event}`
    let names = byEvent.get(pairKey)?.names
    if (names === undefined) byEvent.set(pairKey, { projectId: s.projectId, event: s.event, names: (names = new Set()) })
    const eventBucket = bucketOf(s.projectId, PROPERTY_KIND.event, -1)
    for (const name in s.properties) {
      if (NOT_EVENT_PROPERTIES.has(name)) continue
      addProperty(eventBucket, s.projectId, PROPERTY_KIND.event, -1, name, s.properties[name])
      if (eventBucket.has(name)) names.add(name)
    }
    for (const update of ['$set', '$set_once']) {
      const set = s.properties[update]
      if (!isObject(set)) continue
      const personBucket = bucketOf(s.projectId, PROPERTY_KIND.person, -1)
      for (const name in set) addProperty(personBucket, s.projectId, PROPERTY_KIND.person, -1, name, set[name])
    }
    const groupSet = s.properties.$group_set
    if (s.event === '$groupidentify' && s.groupTypeIndex !== undefined && isObject(groupSet)) {
      const groupBucket = bucketOf(s.projectId, PROPERTY_KIND.group, s.groupTypeIndex)
      for (const name in groupSet) addProperty(groupBucket, s.projectId, PROPERTY_KIND.group, s.groupTypeIndex, name, groupSet[name])
    }
  }
  const events: SeenEvent[] = []
  const eventProperties: SeenEventProperty[] = []
  for (const { projectId, event, names } of byEvent.values()) {
    events.push({ projectId, name: event })
    for (const property of names) eventProperties.push({ projectId, event, property })
  }
  const properties: SeenProperty[] = []
  for (const bucket of buckets.values()) for (const p of bucket.values()) properties.push(p)
  return { events, properties, eventProperties }
}
