import { AppError, validationError } from '../../shared/errors.ts'
import { MAX_GROUP_TYPES, type GroupType, type GroupTypeStore } from './group-type-store.ts'

/**
 * Group types per project, cached in memory (they change a handful of times in a project's life).
 * `ensureGroupTypes` is what ingestion calls for every batch with `$groups`: names already known
 * cost nothing; new ones are created in one store call and the change is announced.
 */
export function createGroupTypeService(store: GroupTypeStore, onChange: (projectId: number) => void = () => {}) {
  const cache = new Map<number, GroupType[]>()

  async function list(projectId: number): Promise<GroupType[]> {
    let types = cache.get(projectId)
    if (!types) {
      types = await store.list(projectId)
      cache.set(projectId, types)
    }
    return types
  }

  async function ensureGroupTypes(projectId: number, names: Iterable<string>): Promise<GroupType[]> {
    const known = await list(projectId)
    if (known.length >= MAX_GROUP_TYPES) return known
    const have = new Set(known.map((t) => t.groupType))
    const missing = [...new Set(names)].filter((n) => typeof n === 'string' && n !== '' && !have.has(n))
    if (missing.length === 0) return known
    const types = await store.insertMissing(projectId, missing)
    cache.set(projectId, types)
    onChange(projectId)
    return types
  }

  return {
    list,
    ensureGroupTypes,
    /** `{"0": "company", ...}`: the mapping as local evaluation sends it. */
    async mapping(projectId: number): Promise<Record<string, string>> {
      return Object.fromEntries((await list(projectId)).map((t) => [String(t.groupTypeIndex), t.groupType]))
    },
    /** Creates one group type through the API (Tally extension; PostHog creates them only from events). */
    async create(projectId: number, name: string): Promise<GroupType> {
      const types = await ensureGroupTypes(projectId, [name])
      const created = types.find((t) => t.groupType === name)
      if (!created) throw validationError('group_type', `A project can have at most ${MAX_GROUP_TYPES} group types.`, 'invalid_input')
      return created
    },
    async updateNames(projectId: number, groupTypeIndex: number, names: { nameSingular: string | null; namePlural: string | null }) {
      const types = await list(projectId)
      if (!types.some((t) => t.groupTypeIndex === groupTypeIndex)) throw new AppError('not_found', 'Not found.')
      await store.updateNames(projectId, groupTypeIndex, names)
      cache.delete(projectId)
      onChange(projectId)
      return (await list(projectId)).find((t) => t.groupTypeIndex === groupTypeIndex)!
    },
  }
}

export type GroupTypeService = ReturnType<typeof createGroupTypeService>
