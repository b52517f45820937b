/** A project's group type: index 0-4 <-> name (PostHog's `posthog_grouptypemapping`). */
export interface GroupType {
  groupType: string
  groupTypeIndex: number
  nameSingular: string | null
  namePlural: string | null
}

/** At most five group types per project, as in PostHog (`$group_0` .. `$group_4`). */
export const MAX_GROUP_TYPES = 5

/** Persistence for group type mappings. */
export interface GroupTypeStore {
  list(projectId: number): Promise<GroupType[]>
  /**
   * Gives each name that has no mapping yet the lowest free index, in the given order; names that do
   * not fit in the five slots are skipped. Safe against concurrent writers. Returns the full list.
   */
  insertMissing(projectId: number, names: readonly string[]): Promise<GroupType[]>
  updateNames(projectId: number, groupTypeIndex: number, names: { nameSingular: string | null; namePlural: string | null }): Promise<void>
}
