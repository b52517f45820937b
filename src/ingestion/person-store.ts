import type { GroupState } from '../domain/groups/index.ts'
import type { PersonOverride, PersonPlan, PersonState } from '../domain/persons/index.ts'

/** What the one look-up of a micro-batch finds. */
export interface PersonLookUp {
  /** Keyed by every asked distinct id that has a person; each person carries ALL its distinct ids. */
  persons: Map<string, PersonState>
  /** Asked distinct ids that sent personless events before having a person. */
  personless: Set<string>
}

/**
 * The persons side of ingestion (PostHog's posthog_person, posthog_persondistinctid,
 * posthog_personlessdistinctid): one set-based read and one transactional write per micro-batch.
 * The ingestion worker is the only writer of persons, so no optimistic version check is made.
 */
export interface PersonStore {
  /** One look-up for all distinct ids of a batch (a fixed number of statements, whatever their count). */
  lookUp(projectId: number, distinctIds: readonly string[]): Promise<PersonLookUp>
  /**
   * Applies a plan in ONE transaction, set-based (one statement per table, never one per person):
   * person upserts, distinct-id moves, merged persons deleted (their flag hash-key overrides and
   * static cohort memberships moved to the person they merged into), personless distinct ids recorded.
   */
  apply(projectId: number, plan: Pick<PersonPlan, 'upserts' | 'deletes' | 'distinctIdMoves' | 'overrides' | 'personlessDistinctIds'>): Promise<void>
}

/** The events-side copy of person merges (PostHog's person_distinct_id_overrides), read by event queries. */
export interface PersonOverrideStore {
  /**
   * Records that events stored with `oldPersonId` belong to `overridePersonId`; rows already pointing
   * at a now merged-away person are re-pointed, so the table never holds a chain. Idempotent.
   */
  write(projectId: number, overrides: readonly PersonOverride[]): Promise<void>
}

/** The groups side of ingestion (PostHog's posthog_grouptypemapping read, posthog_group written). */
export interface GroupStore {
  /** Stored groups of these (index, key) pairs, keyed by `groupId(index, key)` (one statement). */
  lookUpGroups(projectId: number, refs: ReadonlyArray<{ typeIndex: number; key: string }>): Promise<Map<string, GroupState>>
  /** Upserts the final state of the groups a batch changed (one statement). */
  applyGroups(projectId: number, upserts: readonly GroupState[]): Promise<void>
}
