import type { StoredEvent } from '../event-store.ts'
import type { GroupTypeService } from '../../modules/group-types/group-type-service.ts'
import { ok, retry, type BatchStep, type StepResult } from '../results.ts'

/**
 * Creates the group types named in events' `$groups` (PostHog's group type manager): one
 * `ensureGroupTypes` call per project per batch, which costs nothing once the names are known.
 * Events pass through unchanged; a store failure retries the batch.
 */
export function createGroupTypesStep(groupTypes: Pick<GroupTypeService, 'ensureGroupTypes'>): BatchStep<StoredEvent, StoredEvent> {
  return {
    name: 'group-types',
    async run(batch) {
      const namesByProject = new Map<number, Set<string>>()
      for (const event of batch) {
        if (!event.properties.includes('"$groups"')) continue
        let groups: unknown
        try {
          groups = (JSON.parse(event.properties) as Record<string, unknown>).$groups
        } catch {
          continue
        }
        if (!groups || typeof groups !== 'object' || Array.isArray(groups)) continue
        const names = namesByProject.get(event.projectId) ?? new Set<string>()
        for (const name of Object.keys(groups)) names.add(name)
        namesByProject.set(event.projectId, names)
      }
      try {
        for (const [projectId, names] of namesByProject) await groupTypes.ensureGroupTypes(projectId, names)
      } catch (err) {
        return batch.map((): StepResult<StoredEvent> => retry('group_types_unavailable', err))
      }
      return batch.map((event) => ok(event))
    },
  }
}
