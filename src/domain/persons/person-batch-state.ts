import { copyProperties } from './property-updates.ts'
import type { PersonState } from './person-types.ts'

/** A person being worked on in a batch: `known` says whether the store already holds its row. */
export interface WorkingPerson extends PersonState {
  known: boolean
  touched: boolean
  /** The properties events were last given, valid while `version` is unchanged. */
  snapshot?: { version: number; personId: string; properties: Readonly<Record<string, unknown>> }
}

/**
 * The in-memory view of the persons one micro-batch reads and writes. Built from the single look-up
 * the step did for all distinct ids of the batch; every change stays here until the plan is emitted.
 */
export interface PersonBatchState {
  persons: Map<string, WorkingPerson>
  byDistinctId: Map<string, string>
  /** Distinct ids whose mapping changed (new or moved). */
  movedDistinctIds: Set<string>
  /** Merged-away person id -> person id it was merged into (may chain; resolve with `resolveOverride`). */
  mergedInto: Map<string, string>
  /** Persons the store holds that were merged away: their rows are deleted. */
  deletedKnown: string[]
}

/** Copies the looked-up persons (one entry per person even when several distinct ids map to it). */
export function createBatchState(knownPersons: ReadonlyMap<string, PersonState>): PersonBatchState {
  const state: PersonBatchState = {
    persons: new Map(), byDistinctId: new Map(), movedDistinctIds: new Set(), mergedInto: new Map(), deletedKnown: [],
  }
  for (const person of knownPersons.values()) {
    if (state.persons.has(person.id)) continue
    state.persons.set(person.id, {
      ...person,
      distinctIds: [...person.distinctIds],
      properties: copyProperties(person.properties),
      known: true,
      touched: false,
      snapshot: undefined,
    })
    for (const distinctId of person.distinctIds) state.byDistinctId.set(distinctId, person.id)
  }
  // A look-up answer keyed by a distinct id its person row does not list still maps it (defensive).
  for (const [distinctId, person] of knownPersons) {
    if (!state.byDistinctId.has(distinctId)) state.byDistinctId.set(distinctId, person.id)
  }
  return state
}

export function personOf(state: PersonBatchState, distinctId: string): WorkingPerson | undefined {
  const id = state.byDistinctId.get(distinctId)
  return id === undefined ? undefined : state.persons.get(id)
}

export function createPerson(
  state: PersonBatchState,
  input: { id: string; distinctIds: string[]; properties: Record<string, unknown>; createdAt: Date; isIdentified: boolean },
): WorkingPerson {
  const person: WorkingPerson = { ...input, distinctIds: [], version: 0, known: false, touched: true }
  state.persons.set(person.id, person)
  for (const distinctId of input.distinctIds) addDistinctId(state, person, distinctId)
  return person
}

export function addDistinctId(state: PersonBatchState, person: WorkingPerson, distinctId: string): void {
  person.distinctIds.push(distinctId)
  person.touched = true
  state.byDistinctId.set(distinctId, person.id)
  state.movedDistinctIds.add(distinctId)
}

/** Marks a change that PostHog writes (and so versions): properties or is_identified. */
export function bumpVersion(person: WorkingPerson): void {
  person.touched = true
  person.version += 1
}

/**
 * Moves every distinct id of `source` to `target` and forgets `source` (PostHog's mergePeople after its
 * checks): target's version becomes max(both)+1, created_at the older of both, is_identified true.
 * The caller has already computed the merged properties.
 */
export function absorbPerson(state: PersonBatchState, target: WorkingPerson, source: WorkingPerson): void {
  for (const distinctId of source.distinctIds) addDistinctId(state, target, distinctId)
  target.createdAt = source.createdAt < target.createdAt ? source.createdAt : target.createdAt
  target.version = Math.max(target.version, source.version) + 1
  target.isIdentified = true
  target.touched = true
  state.persons.delete(source.id)
  state.mergedInto.set(source.id, target.id)
  if (source.known) state.deletedKnown.push(source.id)
}

/** The person a merged-away id now belongs to, following chains (A into B, then B into C gives C). */
export function resolveOverride(state: PersonBatchState, personId: string): string {
  let id = personId
  for (let next = state.mergedInto.get(id); next !== undefined; next = state.mergedInto.get(id)) id = next
  return id
}
