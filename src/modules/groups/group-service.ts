import { AppError } from '../../shared/errors.ts'
import type { Project } from '../projects/project-types.ts'
import type { GroupStore } from './group-store.ts'
import type { Group, GroupListQuery } from './group-types.ts'

/** The groups API: a keyset-paged list per group type, and a look-up by key. */
export function createGroupService(store: GroupStore) {
  return {
    /** One page and whether another follows (one row more is read to know). */
    async list(project: Project, query: GroupListQuery): Promise<{ groups: Group[]; hasMore: boolean }> {
      const rows = await store.list(project.id, { ...query, limit: query.limit + 1 })
      return { groups: rows.slice(0, query.limit), hasMore: rows.length > query.limit }
    },
    async find(project: Project, typeIndex: number, key: string): Promise<Group> {
      const group = await store.find(project.id, typeIndex, key)
      if (!group) throw new AppError('not_found', 'Not found.')
      return group
    },
  }
}

export type GroupService = ReturnType<typeof createGroupService>
