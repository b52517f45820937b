import { compileFlags, type CompiledFlags } from '../../domain/flags/compile-flags.ts'
import type { CohortDefinition, FlagDefinition } from '../../domain/flags/flag-types.ts'
import { flagFilters } from '../../domain/flags/flag-filters.ts'
import { dependencyGraph, withDependents } from '../../domain/flags/flag-dependencies.ts'
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
  /** Some flag is active (remote config's `hasFeatureFlags`). */
  hasActiveFlags: boolean
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
  const reads = { person: new Set<number>(), group: new Set<number>(), continuity: new Set<number>() }
  flags.forEach((flag, i) => {
    if (!flag.active) return
    if (flag.ensureExperienceContinuity) reads.continuity.add(i)
    if (flag.filters.aggregation_group_type_index != null) reads.group.add(i)
    if (flag.filters.feature_enrollment) reads.person.add(i)
    for (const { filter, aggregation } of flagFilters(flag.filters)) {
      if (filter.type === 'flag') continue
      if (filter.type === 'cohort') reads.person.add(i)
      else if (filter.type === 'group' || aggregation !== null) reads.group.add(i)
      else reads.person.add(i)
    }
  })
  // A flag that depends on one reading stored data reads it too.
  const graph = dependencyGraph(flags)
  const activeKeys = (seeds: Set<number>) =>
    new Set([...withDependents(graph, seeds)].filter((i) => flags[i]!.active).map((i) => flags[i]!.key))
  const personFlags = activeKeys(reads.person)
  const groupFlags = activeKeys(reads.group)
  const continuityFlags = activeKeys(reads.continuity)
  const hasActiveFlags = compiled.flags.some((f) => f.active)
  return { projectId, flags, cohorts, groupTypes, compiled, personFlags, groupFlags, continuityFlags, groupTypeMapping, hasActiveFlags }
}
