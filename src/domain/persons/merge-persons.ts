import { isDistinctIdIllegal } from './illegal-distinct-id.ts'
import {
  absorbPerson, addDistinctId, createPerson, personOf, type PersonBatchState, type WorkingPerson,
} from './person-batch-state.ts'
import type { PersonEvent, PersonWarning } from './person-types.ts'
import { applyPropertyUpdates, copyProperties, defineProperty, initialProperties, type PropertyUpdates } from './property-updates.ts'

export interface MergeContext {
  state: PersonBatchState
  newId: () => string
  warnings: PersonWarning[]
}

/** The event's person after an identify/alias/merge; `propertiesApplied` when its updates are already in. */
export interface MergeResult {
  person: WorkingPerson
  propertiesApplied: boolean
}

/**
 * The distinct id an identify-like event asks to merge into the event's own distinct id, or null.
 * PostHog (`person-merge-service.ts` handleIdentifyOrAlias): `$create_alias` and `$merge_dangerously`
 * with a truthy `alias`; `$identify` with a `$anon_distinct_id` key (any value, stringified).
 */
export function mergeSourceOf(event: PersonEvent): string | null {
  const props = event.properties
  if ((event.event === '$create_alias' || event.event === '$merge_dangerously') && props.alias) return String(props.alias)
  if (event.event === '$identify' && Object.hasOwn(props, '$anon_distinct_id')) return String(props.$anon_distinct_id)
  return null
}

/** A person created by `event` with PostHog's initial properties (`{...$set_once, ...$set, $creator_event_uuid}`). */
export function createPersonFor(
  ctx: MergeContext, event: PersonEvent, updates: PropertyUpdates, distinctIds: string[], isIdentified: boolean,
): WorkingPerson {
  const properties = initialProperties(updates)
  defineProperty(properties, '$creator_event_uuid', event.uuid)
  return createPerson(ctx.state, { id: ctx.newId(), distinctIds, properties, createdAt: event.timestamp, isIdentified })
}

/**
 * Applies an identify-like event's merge of `other` into the event's distinct id, with PostHog's rules
 * (`merge`, `mergeDistinctIds`, `mergePeople`): same id or an illegal id -> no merge (undefined; the
 * latter warns `cannot_merge_with_illegal_distinct_id`). Otherwise the resulting person is identified:
 * only one id has a person -> the other id joins it; neither -> one new person with both ids; the same
 * person -> nothing; two persons -> the other one merges into the event's person unless it is already
 * identified and the event is not `$merge_dangerously` (then `cannot_merge_already_identified`, and the
 * event stays with its own person). Merged properties: `{...other, ...into}` then the event's updates.
 */
export function applyMerge(ctx: MergeContext, event: PersonEvent, other: string, updates: PropertyUpdates): MergeResult | undefined {
  const into = event.distinctId
  if (other === into) return undefined
  for (const [illegal, otherId] of [[into, other], [other, into]] as const) {
    if (!isDistinctIdIllegal(illegal)) continue
    ctx.warnings.push({
      type: 'cannot_merge_with_illegal_distinct_id',
      details: { illegalDistinctId: illegal, otherDistinctId: otherId, eventUuid: event.uuid },
    })
    return undefined
  }
  const otherPerson = personOf(ctx.state, other)
  const intoPerson = personOf(ctx.state, into)
  if (otherPerson && !intoPerson) {
    addDistinctId(ctx.state, otherPerson, into)
    return { person: otherPerson, propertiesApplied: false }
  }
  if (intoPerson && !otherPerson) {
    addDistinctId(ctx.state, intoPerson, other)
    return { person: intoPerson, propertiesApplied: false }
  }
  if (!intoPerson || !otherPerson) {
    return { person: createPersonFor(ctx, event, updates, [into, other], true), propertiesApplied: true }
  }
  if (intoPerson.id === otherPerson.id) return { person: intoPerson, propertiesApplied: false }
  if (otherPerson.isIdentified && event.event !== '$merge_dangerously') {
    ctx.warnings.push({
      type: 'cannot_merge_already_identified',
      details: { sourcePersonDistinctId: other, targetPersonDistinctId: into, eventUuid: event.uuid },
    })
    return { person: intoPerson, propertiesApplied: false }
  }
  const merged = copyProperties(otherPerson.properties)
  for (const key of Object.keys(intoPerson.properties)) defineProperty(merged, key, intoPerson.properties[key])
  applyPropertyUpdates(merged, updates)
  intoPerson.properties = merged
  absorbPerson(ctx.state, intoPerson, otherPerson)
  return { person: intoPerson, propertiesApplied: true }
}
