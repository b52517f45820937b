// Test builders shared by the persons tests (not imported by production code).
import { distinctIdsToLookUp, planPersonUpdates } from './plan-person-updates.ts'
import type { PersonEvent, PersonPlan, PersonState } from './person-types.ts'

let clock = Date.parse('2024-01-01T00:00:00Z')

/** An event at a strictly later time than the previous one built (unless `at` is given). */
export function anEvent(event: string, distinctId: string, properties: Record<string, unknown> = {}, at?: Date): PersonEvent {
  clock += 1000
  return { uuid: `e-${clock}`, event, distinctId, timestamp: at ?? new Date(clock), properties }
}
export const identify = (distinctId: string, anon: unknown, props: Record<string, unknown> = {}): PersonEvent =>
  anEvent('$identify', distinctId, { $anon_distinct_id: anon, ...props })
export const alias = (distinctId: string, other: unknown, props: Record<string, unknown> = {}): PersonEvent =>
  anEvent('$create_alias', distinctId, { alias: other, ...props })
export const mergeDangerously = (distinctId: string, other: unknown, props: Record<string, unknown> = {}): PersonEvent =>
  anEvent('$merge_dangerously', distinctId, { alias: other, ...props })
export const setEvent = (distinctId: string, props: Record<string, unknown>): PersonEvent => anEvent('$set', distinctId, props)

/** Deterministic ids: `person-1`, `person-2`, ... per call of `idSource`. */
export function idSource(prefix = 'person'): () => string {
  let n = 0
  return () => `${prefix}-${++n}`
}

/** Applies a plan's writes to a store image keyed by person id (what the store adapter will do). */
export function applyPlan(store: Map<string, PersonState>, plan: PersonPlan): void {
  for (const id of plan.deletes) store.delete(id)
  for (const p of plan.upserts) store.set(p.id, structuredClone(p))
}

/** The look-up answer for `distinctIds` from a store image: what the pipeline's one query returns. */
export function lookUp(store: Map<string, PersonState>, distinctIds: Iterable<string>): Map<string, PersonState> {
  const byDistinct = new Map<string, PersonState>()
  for (const p of store.values()) for (const d of p.distinctIds) byDistinct.set(d, p)
  const out = new Map<string, PersonState>()
  for (const d of distinctIds) {
    const p = byDistinct.get(d)
    if (p) out.set(d, structuredClone(p))
  }
  return out
}

/**
 * Plans `events` as one batch against `store` (and the store's personless distinct ids), applies it,
 * and returns the plan.
 */
export function runBatch(
  store: Map<string, PersonState>, events: PersonEvent[], newId: () => string, personlessStore = new Set<string>(),
): PersonPlan {
  const ids = new Set(distinctIdsToLookUp(events))
  const personlessBefore = new Set([...ids].filter((d) => personlessStore.has(d)))
  const knownPersons = lookUp(store, ids)
  const plan = planPersonUpdates({ events, knownPersons, newId, personlessId: (d) => `personless-${d}`, personlessBefore })
  applyPlan(store, plan)
  for (const d of plan.personlessDistinctIds) personlessStore.add(d)
  return plan
}

/** The person holding `distinctId` in a store image. */
export function personWith(store: Map<string, PersonState>, distinctId: string): PersonState | undefined {
  return [...store.values()].find((p) => p.distinctIds.includes(distinctId))
}
