/** A person as the planner sees it: what the MetaStore keeps per person (PostHog's `posthog_person`). */
export interface PersonState {
  /** Person UUID. Stable for the person's life; a merged-away person's id lives on as an override. */
  id: string
  /** Every distinct id that maps to this person (PostHog's `posthog_persondistinctid`). */
  distinctIds: string[]
  properties: Record<string, unknown>
  isIdentified: boolean
  createdAt: Date
  /** Bumped on every write; a merge takes max(both)+1, as PostHog does (later splits win over it). */
  version: number
}

/**
 * The part of a normalised event that person processing reads. `NormalisedEvent` (domain/events)
 * satisfies it: capture has already merged top-level `$set`/`$set_once` into `properties`.
 */
export interface PersonEvent {
  uuid: string
  event: string
  distinctId: string
  timestamp: Date
  /** Incl. `$set`, `$set_once`, `$unset`, `$anon_distinct_id`, `alias`, `$process_person_profile`. */
  properties: Record<string, unknown>
}

/** PostHog's `person_mode` on an event: full person, personless, or personless of a person older than 1 min. */
export type PersonMode = 'full' | 'propertyless' | 'force_upgrade'

/** What one event carries into the EventStore (persons-on-events), or why it is dropped. */
export type EventPersonResult =
  | {
      kind: 'person'
      uuid: string
      personId: string
      /** Snapshot after this event's own updates; `{}` for personless events. */
      personProperties: Record<string, unknown>
      personCreatedAt: Date
      personMode: PersonMode
    }
  | { kind: 'drop'; uuid: string; reason: 'invalid_event_when_process_person_profile_is_false' }

export type PersonWarningType =
  | 'cannot_merge_with_illegal_distinct_id'
  | 'cannot_merge_already_identified'
  | 'invalid_event_when_process_person_profile_is_false'
  | 'invalid_process_person_profile'

/** An ingestion warning (PostHog's `ingestion_warnings`): never changes an HTTP answer. */
export interface PersonWarning {
  type: PersonWarningType
  details: Record<string, unknown>
}

/** A distinct id that now maps to `personId` (new, or moved by a merge). */
export interface DistinctIdMove {
  distinctId: string
  personId: string
}

/** Events stored with `oldPersonId` belong to `overridePersonId` (resolved: never chains). */
export interface PersonOverride {
  oldPersonId: string
  overridePersonId: string
}

/** Everything one micro-batch changes: one upsert per table, applied in one transaction. */
export interface PersonPlan {
  /** Final state of every person created or changed by the batch (at most one row per person). */
  upserts: PersonState[]
  /** Known persons merged away (delete their rows). Persons born and merged in the batch are not listed. */
  deletes: string[]
  distinctIdMoves: DistinctIdMove[]
  overrides: PersonOverride[]
  /** One per input event, in input order. */
  events: EventPersonResult[]
  warnings: PersonWarning[]
  /** Distinct ids used by personless events that had no person (PostHog's `posthog_personlessdistinctid`). */
  personlessDistinctIds: string[]
}
