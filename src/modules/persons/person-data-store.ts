/** What flag evaluation knows about a stored person. */
export interface StoredPerson {
  personId: number
  properties: Record<string, unknown>
  /** Static cohorts the person belongs to. */
  staticCohortIds: number[]
}

export interface GroupRef {
  groupTypeIndex: number
  groupKey: string
}

export interface HashKeyOverride {
  /** Which of the requested distinct ids owns the person the override belongs to. */
  distinctId: string
  flagKey: string
  hashKey: string
}

/**
 * The read port /decide uses for stored person data (persons, groups, static cohort membership,
 * experience-continuity overrides). Every method is set-based: one call serves many requests.
 */
export interface PersonDataReader {
  /**
   * Persons of these distinct ids, keyed by distinct id; ids without a person are absent. Static
   * cohort ids are read only with `withCohorts` (left empty otherwise: it costs a sub-query per row).
   */
  getPersons(projectId: number, distinctIds: readonly string[], opts?: { withCohorts?: boolean }): Promise<Map<string, StoredPerson>>
  /** Group properties keyed by `${groupTypeIndex}:${groupKey}`; unknown groups are absent. */
  getGroups(projectId: number, refs: readonly GroupRef[]): Promise<Map<string, Record<string, unknown>>>
  getHashKeyOverrides(projectId: number, distinctIds: readonly string[]): Promise<HashKeyOverride[]>
  /**
   * A page of a project's persons, most recently created first (cache warm-up): persons with an id
   * below `beforePersonId` (all when null), each under every distinct id it has; `next` is the
   * cursor of the following page, null after the last.
   */
  scanPersons(
    projectId: number,
    opts: { beforePersonId: number | null; limit: number; withCohorts: boolean },
  ): Promise<{ persons: Array<{ distinctId: string; person: StoredPerson }>; next: number | null }>
  /**
   * Stores `hashKey` as the override of every given flag for the persons of `distinctIds`, unless an
   * override exists already: the first writer wins, rows are never updated (PostHog's continuity).
   */
  writeHashKeyOverrides(input: { projectId: number; distinctIds: readonly string[]; flagKeys: readonly string[]; hashKey: string }): Promise<void>
}

/**
 * The minimal write side until Tally ingests persons: static cohort uploads, tests and the benchmark
 * use it. PostHog-shaped so the persons feature can take it over.
 */
export interface PersonDataWriter {
  /** Person ids of these distinct ids, creating property-less persons for unknown ids. */
  ensurePersons(projectId: number, distinctIds: readonly string[]): Promise<Map<string, number>>
  /** Person ids of these person UUIDs (unknown UUIDs are skipped). */
  findPersonIdsByUuid(projectId: number, uuids: readonly string[]): Promise<number[]>
  /** Creates persons (one distinct id each) or replaces their properties; bulk, one statement per call. */
  upsertPersons(projectId: number, persons: ReadonlyArray<{ distinctId: string; properties: Record<string, unknown> }>): Promise<void>
  upsertGroups(projectId: number, groups: ReadonlyArray<GroupRef & { properties: Record<string, unknown> }>): Promise<void>
}
