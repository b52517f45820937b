import { compileFlags, type CompiledFlags } from '../../domain/flags/compile-flags.ts'
import type { CohortDefinition, FlagDefinition } from '../../domain/flags/flag-types.ts'
import { flagFilters } from '../../domain/flags/flag-filters.ts'
import type { Cohort } from '../cohorts/cohort-types.ts'
import type { GroupType } from '../group-types/group-type-store.ts'
import type { FeatureFlag } from '../feature-flags/feature-flag-types.ts'

/** Everything /decide and local evaluation need about one project's flags, built once per change. */
export interface ProjectFlagState {
  projectId: number
  flags: FeatureFlag[]
  cohorts: Cohort[]
  groupTypes: GroupType[]
  compiled: CompiledFlags
  /** Keys of active flags that read stored person data (person properties or cohorts). */
  personFlags: ReadonlySet<string>
  /** Keys of active flags that read group properties. */
  groupFlags: ReadonlySet<string>
  /** Keys of active flags with `ensure_experience_continuity`. */
  continuityFlags: ReadonlySet<string>
  /** Group type index -> name. */
  groupTypeMapping: Record<string, string>
}

export function toFlagDefinition(f: FeatureFlag): FlagDefinition {
  return {
    id: f.id,
    key: f.key,
    name: f.name,
    active: f.active,
    deleted: f.deleted,
    ensure_experience_continuity: f.ensureExperienceContinuity,
    filters: f.filters,
    version: f.version,
    rollout_percentage: f.rolloutPercentage,
  }
}

export function toCohortDefinition(c: Cohort): CohortDefinition {
  return { id: c.id, is_static: c.isStatic, deleted: c.deleted, filters: c.filters, groups: c.groups as CohortDefinition['groups'] }
}

/** Builds the state from the stored rows: compiles the flags and works out what each one reads. */
export function buildFlagState(projectId: number, flags: FeatureFlag[], cohorts: Cohort[], groupTypes: GroupType[]): ProjectFlagState {
  const groupTypeMapping = Object.fromEntries(groupTypes.map((t) => [String(t.groupTypeIndex), t.groupType]))
  const compiled = compileFlags(flags.map(toFlagDefinition), { cohorts: cohorts.map(toCohortDefinition), groupTypeMapping })
  const personFlags = new Set<string>()
  const groupFlags = new Set<string>()
  const continuityFlags = new Set<string>()
  const dependsOn = new Map<string, string[]>()
  const keyById = new Map(flags.map((f) => [String(f.id), f.key]))
  for (const flag of flags) {
    if (!flag.active) continue
    if (flag.ensureExperienceContinuity) continuityFlags.add(flag.key)
    if (flag.filters.aggregation_group_type_index != null) groupFlags.add(flag.key)
    if (flag.filters.feature_enrollment) personFlags.add(flag.key)
    for (const { filter, aggregation } of flagFilters(flag.filters)) {
      if (filter.type === 'flag') {
        const target = keyById.get(String(filter.key)) ?? String(filter.key)
        dependsOn.set(flag.key, [...(dependsOn.get(flag.key) ?? []), target])
      } else if (filter.type === 'cohort') personFlags.add(flag.key)
      else if (filter.type === 'group' || aggregation !== null) groupFlags.add(flag.key)
      else personFlags.add(flag.key)
    }
  }
  // A flag that depends on one reading stored data reads it too.
  for (let changed = true; changed; ) {
    changed = false
    for (const [key, targets] of dependsOn) {
      for (const set of [personFlags, groupFlags, continuityFlags]) {
        if (!set.has(key) && targets.some((t) => set.has(t))) {
          set.add(key)
          changed = true
        }
      }
    }
  }
  return { projectId, flags, cohorts, groupTypes, compiled, personFlags, groupFlags, continuityFlags, groupTypeMapping }
}
