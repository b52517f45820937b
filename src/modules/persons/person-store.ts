import { PERSON_SQL_OPERATORS } from '../../domain/properties/property-operators.ts'
import type { Page } from '../../shared/page.ts'
import type { DeletedPerson, Person, PersonListQuery, PersonPropertyValue } from './person-types.ts'

/**
 * Person-property operators the store runs (from the operator table): the domain matcher's, dates
 * and versions included (the SQL parses them as the domain does; storage/sql/date-filter-sql.ts
 * lists its one gap). `regex` patterns must be valid RE2 (no back-references), so the store's engine
 * runs them without backtracking blow-ups.
 */
export const PERSON_FILTER_OPERATORS: ReadonlySet<string> = PERSON_SQL_OPERATORS

/**
 * Persons as the persons API reads and deletes them (ingestion writes them through its own port).
 * Every method is one set-based look-up; all are scoped to a project, so an id of another project
 * reads as absent.
 */
export interface PersonStore {
  /**
   * A page of the matching persons, newest first (by id, descending); filters use only
   * {@link PERSON_FILTER_OPERATORS}. A pattern the store's regex dialect refuses is a `validation_error` on `properties`.
   */
  list(projectId: number, query: PersonListQuery, page: Page): Promise<Person[]>
  /** How many persons match (PostHog's `include_total`). */
  count(projectId: number, query: PersonListQuery): Promise<number>
  /** The person with this numeric id or uuid; null when absent. */
  find(projectId: number, ref: { id: number } | { uuid: string }): Promise<Person | null>
  /** The persons of these uuids (absent ones are left out), in no particular order. */
  findByUuids(projectId: number, uuids: readonly string[]): Promise<Person[]>
  /** The person of each of these distinct ids, keyed by the distinct id asked; unknown ids are absent. */
  findByDistinctIds(projectId: number, distinctIds: readonly string[]): Promise<Map<string, Person>>
  /**
   * Deletes the person, its distinct ids, static cohort memberships and flag hash-key overrides in
   * one transaction; null when there was no such person.
   */
  delete(projectId: number, personId: number): Promise<DeletedPerson | null>
  /** Values of a property with how many persons hold each, most frequent first; `search` filters them (any case). */
  propertyValues(projectId: number, key: string, opts: { search?: string; limit: number }): Promise<PersonPropertyValue[]>
}

/** The person's events in the event store (DuckDB now, ClickHouse later). */
export interface PersonEventStore {
  /**
   * Deletes every event whose effective person (after merges, `person_overrides`) is this person,
   * and the overrides that point at it; resolves with the number of events deleted.
   */
  deletePersonEvents(projectId: number, personUuid: string): Promise<number>
}
