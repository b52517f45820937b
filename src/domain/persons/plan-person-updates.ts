import { createBatchState, bumpVersion, personOf, resolveOverride, type PersonBatchState } from './person-batch-state.ts'
import { applyMerge, createPersonFor, mergeSourceOf, type MergeContext } from './merge-persons.ts'
import type { EventPersonResult, PersonEvent, PersonPlan, PersonState, PersonWarning } from './person-types.ts'
import { applyPropertyUpdates, copyProperties, readPropertyUpdates } from './property-updates.ts'

export interface PlanPersonUpdatesInput {
  /** The micro-batch, any order (applied in timestamp order, ties in input order). */
  events: readonly PersonEvent[]
  /**
   * The one look-up's answer: every distinct id of `distinctIdsToLookUp(events)` that has a person,
   * each person with ALL its distinct ids (a merge moves ids the batch never mentions).
   */
  knownPersons: ReadonlyMap<string, PersonState>
  /** A new person UUID. */
  newId: () => string
  /** The stable person UUID PostHog gives personless events of a distinct id without a person. */
  personlessId: (distinctId: string) => string
  /**
   * Distinct ids of the batch that earlier batches used for personless events (PostHog's
   * `posthog_personlessdistinctid`), read by the same look-up: when one gets a person here, its
   * personless events are pointed at that person by an override.
   */
  personlessBefore?: ReadonlySet<string>
}

/** Events PostHog drops when `$process_person_profile` is false (plugin-server normalizeEventStep). */
const PERSON_ONLY_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously', '$groupidentify'])
/** Events whose `$set`s never reach the person (person-update.ts). */
const NO_PROPERTY_UPDATE_EVENTS = new Set(['$exception', '$$heatmap'])
/** created_at PostHog gives the fake person of a personless distinct id. */
const PERSONLESS_CREATED_AT = new Date('1970-01-01T00:00:05Z')
/** A personless event of a person older than this is marked force_upgrade (person-state.ts). */
const FORCE_UPGRADE_AFTER_MS = 60_000

/**
 * Every distinct id a batch needs looked up (event ids, `$anon_distinct_id`, `alias`): the step reads
 * them all in ONE query and passes the answer as `knownPersons`.
 */
export function distinctIdsToLookUp(events: readonly PersonEvent[]): string[] {
  const ids = new Set<string>()
  for (const event of events) {
    ids.add(event.distinctId)
    const other = mergeSourceOf(event)
    if (other !== null) ids.add(other)
  }
  return [...ids]
}

/**
 * Plans the person side of one micro-batch with PostHog's rules, purely: no I/O, `knownPersons` is the
 * only read, the plan is the only write (one upsert per table). Invariants: events are applied in
 * timestamp order (stable); every event gets a result; a distinct id maps to one person; `$set_once`
 * never overwrites; personless events create and change nothing; two identified persons merge only by
 * `$merge_dangerously`; feeding a plan's persons back as `knownPersons` continues where it stopped, so a
 * batch split anywhere ends in the same persons as one batch.
 */
export function planPersonUpdates(input: PlanPersonUpdatesInput): PersonPlan {
  const state = createBatchState(input.knownPersons)
  const warnings: PersonWarning[] = []
  const ctx: MergeContext = { state, newId: input.newId, warnings }
  const personless = new Set<string>()
  const order = input.events.map((_, i) => i)
  order.sort((a, b) => input.events[a]!.timestamp.getTime() - input.events[b]!.timestamp.getTime() || a - b)
  const results: EventPersonResult[] = new Array(input.events.length)
  for (const i of order) {
    const event = input.events[i]!
    const processPerson = readProcessPerson(event, warnings)
    if (processPerson === 'drop') {
      results[i] = { kind: 'drop', uuid: event.uuid, reason: 'invalid_event_when_process_person_profile_is_false' }
    } else if (!processPerson) {
      results[i] = personlessResult(state, event, input.personlessId, personless)
    } else {
      results[i] = processEvent(ctx, event)
    }
  }
  for (const distinctId of input.personlessBefore ?? []) {
    if (state.movedDistinctIds.has(distinctId) && !input.knownPersons.has(distinctId)) personless.add(distinctId)
  }
  return emitPlan(state, results, warnings, personless, input.personlessId)
}

function readProcessPerson(event: PersonEvent, warnings: PersonWarning[]): boolean | 'drop' {
  if (!Object.hasOwn(event.properties, '$process_person_profile')) return true
  const value = event.properties.$process_person_profile
  const details = { eventUuid: event.uuid, event: event.event, distinctId: event.distinctId }
  if (value === false) {
    if (!PERSON_ONLY_EVENTS.has(event.event)) return false
    warnings.push({ type: 'invalid_event_when_process_person_profile_is_false', details })
    return 'drop'
  }
  // Anything but a boolean is invalid and reads as the default, true (PostHog's normalizeEventStep).
  if (value !== true) warnings.push({ type: 'invalid_process_person_profile', details: { ...details, value: String(value) } })
  return true
}

function personlessResult(
  state: PersonBatchState, event: PersonEvent, personlessId: (d: string) => string, personless: Set<string>,
): EventPersonResult {
  const person = personOf(state, event.distinctId)
  if (person === undefined) {
    personless.add(event.distinctId)
    const personId = personlessId(event.distinctId)
    return { kind: 'person', uuid: event.uuid, personId, personProperties: {}, personCreatedAt: PERSONLESS_CREATED_AT, personMode: 'propertyless' }
  }
  // PostHog hides an existing person's properties from personless events.
  const isOld = event.timestamp.getTime() > person.createdAt.getTime() + FORCE_UPGRADE_AFTER_MS
  return {
    kind: 'person', uuid: event.uuid, personId: person.id, personProperties: {}, personCreatedAt: person.createdAt,
    personMode: isOld ? 'force_upgrade' : 'propertyless',
  }
}

function processEvent(ctx: MergeContext, event: PersonEvent): EventPersonResult {
  const updates = readPropertyUpdates(event.properties)
  const other = mergeSourceOf(event)
  const merge = other === null ? undefined : applyMerge(ctx, event, other, updates)
  let person = merge?.person
  let applied = merge?.propertiesApplied ?? false
  if (person === undefined) {
    person = personOf(ctx.state, event.distinctId)
    if (person === undefined) {
      person = createPersonFor(ctx, event, updates, [event.distinctId], false)
      applied = true
    }
  }
  let changed = false
  if (!applied && !NO_PROPERTY_UPDATE_EVENTS.has(event.event)) changed = applyPropertyUpdates(person.properties, updates)
  // PostHog's updateIsIdentified: any merge attempt past the same-id and illegal-id checks.
  if (merge !== undefined && !person.isIdentified) {
    person.isIdentified = true
    changed = true
  }
  if (changed) bumpVersion(person)
  // Events share one frozen snapshot per person version: no copy per event while nothing changes.
  if (person.snapshot?.version !== person.version || person.snapshot.personId !== person.id) {
    person.snapshot = { version: person.version, personId: person.id, properties: Object.freeze(copyProperties(person.properties)) }
  }
  return {
    kind: 'person', uuid: event.uuid, personId: person.id, personProperties: person.snapshot.properties,
    personCreatedAt: person.createdAt, personMode: 'full',
  }
}

function emitPlan(
  state: PersonBatchState, events: EventPersonResult[], warnings: PersonWarning[], personless: Set<string>,
  personlessId: (d: string) => string,
): PersonPlan {
  const upserts: PersonState[] = []
  for (const p of state.persons.values()) {
    if (!p.touched) continue
    upserts.push({ id: p.id, distinctIds: [...p.distinctIds], properties: p.properties, isIdentified: p.isIdentified, createdAt: p.createdAt, version: p.version })
  }
  const distinctIdMoves = [...state.movedDistinctIds].map((distinctId) => ({ distinctId, personId: state.byDistinctId.get(distinctId)! }))
  const overrides = [...state.mergedInto.keys()].map((oldPersonId) => ({ oldPersonId, overridePersonId: resolveOverride(state, oldPersonId) }))
  // Personless events of a distinct id that got a person (later in the batch, or in an earlier batch
  // per `personlessBefore`) carry the fake id: point it at the person. Only ids that gained a person here.
  for (const distinctId of personless) {
    const personId = state.movedDistinctIds.has(distinctId) ? state.byDistinctId.get(distinctId) : undefined
    if (personId !== undefined) overrides.push({ oldPersonId: personlessId(distinctId), overridePersonId: personId })
  }
  return { upserts, deletes: state.deletedKnown, distinctIdMoves, overrides, events, warnings, personlessDistinctIds: [...personless] }
}
