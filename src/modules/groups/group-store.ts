import type { Group, GroupListQuery } from './group-types.ts'

/** Groups as the groups API reads them (ingestion writes them through its own port). */
export interface GroupStore {
  /**
   * Up to `limit` groups of the type, newest first (`created_at` descending, then key descending),
   * strictly after `after` in that order; scoped to the project.
   */
  list(projectId: number, query: GroupListQuery): Promise<Group[]>
  /** The group of this type and key, or null. */
  find(projectId: number, typeIndex: number, key: string): Promise<Group | null>
  /**
   * The groups of this type with these keys, in one statement: one per asked key that exists (its
   * `key` as asked, in the order asked, each once), absent keys left out; scoped to the project.
   */
  findByKeys(projectId: number, typeIndex: number, keys: readonly string[]): Promise<Group[]>
}
