/** PostHog allows at most 5 group types per project (`group-type-manager.ts` MAX_GROUP_TYPES_PER_TEAM). */
export const MAX_GROUP_TYPES = 5

/** A group as the MetaStore keeps it (PostHog's `posthog_group`), keyed by (type index, key). */
export interface GroupState {
  typeIndex: number
  key: string
  properties: Record<string, unknown>
  createdAt: Date
  version: number
}

/** The part of a normalised event group processing reads (`NormalisedEvent` satisfies it). */
export interface GroupEvent {
  uuid: string
  event: string
  timestamp: Date
  properties: Record<string, unknown>
}

export interface GroupWarning {
  type: 'group_type_limit_reached' | 'invalid_group_set'
  details: Record<string, unknown>
}

export interface PlanGroupUpdatesInput {
  events: readonly GroupEvent[]
  /** The project's group type -> index mapping as stored (indexes 0-4). */
  groupTypes: ReadonlyMap<string, number>
  /** The one look-up's answer for `groupsToLookUp`, keyed by `groupId(index, key)`. */
  knownGroups: ReadonlyMap<string, GroupState>
}

export interface GroupPlan {
  /** Group types first seen in this batch, in the order seen (insert them before the groups). */
  newGroupTypes: { groupType: string; index: number }[]
  /** Final state of every group created or changed. */
  upserts: GroupState[]
  /** Per input event, in input order: the `$group_<index>` properties to set on it (`{}` if none). */
  eventGroups: Record<string, string>[]
  warnings: GroupWarning[]
}

/** The key of a group in maps: type index and group key. */
export function groupId(typeIndex: number, key: string): string {
  return `${typeIndex}:${key}`
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** `$group_type`/`$group_key` of a `$groupidentify`, or null when PostHog skips it (either falsy). */
function readGroupIdentify(event: GroupEvent): { groupType: string; key: string } | null {
  if (event.event !== '$groupidentify') return null
  const { $group_type: groupType, $group_key: key } = event.properties
  if (!groupType || !key || typeof groupType !== 'string') return null
  return { groupType, key: String(key) }
}

/**
 * The (type, key) pairs of `$groupidentify` events whose groups the step must read in ONE query, as
 * group type names: the step maps them to indexes with its stored mapping (new types have no groups).
 */
export function groupsToLookUp(events: readonly GroupEvent[]): { groupType: string; key: string }[] {
  const seen = new Map<string, { groupType: string; key: string }>()
  for (const e of events) {
    const g = readGroupIdentify(e)
    if (g) seen.set(`${g.groupType}\u0000${g.key}`, g)
  }
  return [...seen.values()]
}

/**
 * Plans the group side of one micro-batch, purely, with PostHog's rules (plugin-server `groups.ts`,
 * `process-groups-step.ts`, `properties-updater.ts` upsertGroup). Events are applied in timestamp
 * order (stable). A group type seen for the first time (in `$groups` or a `$groupidentify`) takes the
 * next free index; a sixth type gets none and is ignored with a `group_type_limit_reached` warning.
 * `$groups` (an object `{type: key}`; anything else is ignored) fills `$group_<index>` for each type
 * with an index; keys that are null or objects are skipped, other scalars are stringified.
 * `$groupidentify` with a truthy `$group_type` and `$group_key` upserts group (index, String(key)):
 * `$group_set` keys overwrite (a non-object `$group_set` is a warning and no upsert; PostHog drops the
 * whole event, we keep the event), `created_at` is the earliest timestamp seen, `version` +1 per change.
 * Group events never touch persons.
 */
export function planGroupUpdates(input: PlanGroupUpdatesInput): GroupPlan {
  const types = new Map(input.groupTypes)
  const newGroupTypes: GroupPlan['newGroupTypes'] = []
  const warnings: GroupWarning[] = []
  const groups = new Map<string, GroupState>()
  const touched = new Set<string>()
  const indexOf = (groupType: string, event: GroupEvent): number | undefined => {
    const known = types.get(groupType)
    if (known !== undefined) return known
    const used = new Set(types.values())
    let index = 0
    while (used.has(index)) index++
    if (index >= MAX_GROUP_TYPES) {
      warnings.push({ type: 'group_type_limit_reached', details: { groupType, eventUuid: event.uuid } })
      return undefined
    }
    types.set(groupType, index)
    newGroupTypes.push({ groupType, index })
    return index
  }
  const order = input.events.map((_, i) => i)
  order.sort((a, b) => input.events[a]!.timestamp.getTime() - input.events[b]!.timestamp.getTime() || a - b)
  const eventGroups: Record<string, string>[] = new Array(input.events.length)
  for (const i of order) {
    const event = input.events[i]!
    eventGroups[i] = groupColumns(event, indexOf)
    const identify = readGroupIdentify(event)
    if (identify === null) continue
    const set = event.properties.$group_set ?? {}
    if (!isPlainObject(set)) {
      warnings.push({ type: 'invalid_group_set', details: { eventUuid: event.uuid } })
      continue
    }
    const index = indexOf(identify.groupType, event)
    if (index === undefined) continue
    const id = groupId(index, identify.key)
    if (upsertGroup(groups, input.knownGroups, id, index, identify.key, set, event.timestamp)) touched.add(id)
  }
  return { newGroupTypes, upserts: [...touched].map((id) => groups.get(id)!), eventGroups, warnings }
}

function groupColumns(event: GroupEvent, indexOf: (t: string, e: GroupEvent) => number | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  const declared = event.properties.$groups
  if (!isPlainObject(declared)) return out
  for (const groupType of Object.keys(declared)) {
    const key = declared[groupType]
    if (key === null || key === undefined || typeof key === 'object') continue
    const index = indexOf(groupType, event)
    if (index !== undefined) out[`$group_${index}`] = String(key)
  }
  return out
}

function upsertGroup(
  groups: Map<string, GroupState>, known: ReadonlyMap<string, GroupState>, id: string, typeIndex: number, key: string,
  set: Record<string, unknown>, at: Date,
): boolean {
  let group = groups.get(id)
  if (group === undefined) {
    const stored = known.get(id)
    if (stored === undefined) {
      groups.set(id, { typeIndex, key, properties: { ...set }, createdAt: at, version: 1 })
      return true
    }
    group = { ...stored, properties: { ...stored.properties } }
    groups.set(id, group)
  }
  let changed = false
  for (const k of Object.keys(set)) {
    if (Object.hasOwn(group.properties, k) && group.properties[k] === set[k]) continue
    Object.defineProperty(group.properties, k, { value: set[k], writable: true, enumerable: true, configurable: true })
    changed = true
  }
  if (at < group.createdAt) {
    group.createdAt = at
    changed = true
  }
  if (changed) group.version += 1
  return changed
}
