import { compilePropertyFilter } from '../properties/match-property.ts'
import type { PropertyFilter } from '../properties/property-filter.ts'
import { createCohortCompiler } from './compile-cohorts.ts'
import { EMPTY_BAG } from './eval-env.ts'
import type { EnvMatcher } from './eval-env.ts'
import { findBrokenDependencies, flagRefResolver } from './flag-dependencies.ts'
import type { CompileFlagsOptions, FlagConditionGroup, FlagDefinition, FlagEvaluation } from './flag-types.ts'

/** A condition set ready for evaluation; `index` is its position in the stored flag. */
export interface CompiledCondition {
  index: number
  /** Group type index whose key buckets this condition; null for person conditions. */
  aggregation: number | null
  /** Group type name of `aggregation`; null when the index is unknown. */
  groupTypeName: string | null
  hasFilters: boolean
  filters: EnvMatcher[]
  /** 0..100; 100 skips hashing. */
  rollout: number
  /** Variant override, kept only when it names one of the flag's variants. */
  variant: string | null
}

export type CompiledHoldout = { percentage: number | null; variant: string }

export type CompiledSuper =
  | { kind: 'enrollment'; propertyKey: string }
  | { kind: 'legacy'; keys: string[]; condition: CompiledCondition }

export interface CompiledFlag {
  key: string
  id: number | string
  version: number | null
  active: boolean
  continuity: boolean
  deviceBucketing: boolean
  aggregation: number | null
  groupTypeName: string | null
  /** Variant-override conditions first (stable), as PostHog's flags service orders them. */
  conditions: CompiledCondition[]
  variantKeys: string[]
  /** Cumulative upper bounds of the variant buckets, accumulated like PostHog. */
  variantBounds: number[]
  payloads: Readonly<Record<string, unknown>> | null
  superCondition: CompiledSuper | null
  holdout: CompiledHoldout | null
  /** Depends (transitively) on a missing flag or sits in a dependency cycle. */
  brokenDependency: boolean
  /**
   * Results already built, by outcome (see evaluate-flags `outcomeKey`): a flag has few distinct
   * outcomes, so evaluations share one frozen object each and callers may cache per object.
   */
  outcomes: Map<number, FlagEvaluation>
}

/** Precompiled flags of one project; immutable and reusable across evaluations. */
export interface CompiledFlags {
  flags: CompiledFlag[]
  indexByKey: ReadonlyMap<string, number>
  /** Group type indexes that some flag reads (sizes the per-evaluation group table). */
  groupTypeNames: ReadonlyMap<number, string>
  usesStaticCohorts: boolean
  /** Distinct shared filters (the size of an evaluation's `EvalEnv.memo`). */
  filterSlots: number
}

/**
 * Wraps a matcher that depends on the evaluation's env alone so that its result is computed once per
 * evaluation in `slot` of `env.memo`, however many conditions share it.
 */
function memoised(slot: number, match: EnvMatcher): EnvMatcher {
  return (env) => {
    const known = env.memo[slot]
    if (known !== 0) return known === 1
    const result = match(env)
    env.memo[slot] = result ? 1 : 2
    return result
  }
}

/**
 * Compiles flag definitions once (regexes, dates and versions pre-parsed, conditions ordered,
 * variant buckets and dependencies resolved) so that {@link evaluateFlags} does no parsing.
 * Deleted flags are dropped; inactive flags are kept (they evaluate to false as dependencies).
 */
export function compileFlags(definitions: readonly FlagDefinition[], options: CompileFlagsOptions = {}): CompiledFlags {
  const live = definitions.filter((d) => !d.deleted)
  const mapping = new Map<number, string>()
  for (const [index, name] of Object.entries(options.groupTypeMapping ?? {})) mapping.set(Number(index), name)
  const cohortMatcher = createCohortCompiler(options.cohorts ?? [])
  const staticIds = new Set((options.cohorts ?? []).filter((c) => c.is_static).map((c) => String(c.id)))
  const indexByKey = new Map(live.map((d, i) => [d.key, i]))
  const resolveFlag = flagRefResolver(live)
  const dependencies: number[][] = live.map(() => [])
  let usesStaticCohorts = false
  // Identical property and cohort filters of different flags share one matcher and one memo slot.
  const shared = new Map<string, EnvMatcher>()
  const share = (key: string, build: () => EnvMatcher): EnvMatcher => {
    let matcher = shared.get(key)
    if (matcher === undefined) shared.set(key, (matcher = memoised(shared.size, build())))
    return matcher
  }

  const compileFilter = (f: PropertyFilter, flagIndex: number, aggregation: number | null): EnvMatcher => {
    if (f.type === 'flag') {
      const target = resolveFlag(String(f.key))
      if (target === undefined) {
        dependencies[flagIndex].push(-1)
        return () => false
      }
      dependencies[flagIndex].push(target)
      const expected = f.value
      return (env) => flagEvaluatesTo(env.flagValue(target), expected)
    }
    if (f.type === 'cohort') {
      if (staticIds.has(String(f.value))) usesStaticCohorts = true
      const inCohort = share(JSON.stringify(['cohort', String(f.value)]), () => cohortMatcher(f.value))
      return f.operator === 'not_in' ? (env) => !inCohort(env) : inCohort
    }
    const groupIndex = f.type === 'group' ? (f.group_type_index ?? aggregation) : f.type == null ? aggregation : null
    // What compilePropertyFilter reads (key, operator, value) and the bag it is given.
    const key = JSON.stringify([groupIndex ?? 'person', f.key, f.operator ?? 'exact', f.value ?? null])
    return share(key, () => {
      const match = compilePropertyFilter(f)
      if (groupIndex === null || groupIndex === undefined) return (env) => match(env.person, env.now)
      return (env) => match(env.groupBags[groupIndex] ?? EMPTY_BAG, env.now)
    })
  }

  const compileCondition = (group: FlagConditionGroup, index: number, flag: FlagDefinition, flagIndex: number): CompiledCondition => {
    const flagAggregation = flag.filters.aggregation_group_type_index ?? null
    const aggregation = group.aggregation_group_type_index !== undefined ? (group.aggregation_group_type_index ?? null) : flagAggregation
    const properties = group.properties ?? []
    const variants = flag.filters.multivariate?.variants ?? []
    const variant = group.variant != null && variants.some((v) => v.key === group.variant) ? group.variant : null
    return {
      index,
      aggregation,
      groupTypeName: aggregation === null ? null : (mapping.get(aggregation) ?? null),
      hasFilters: properties.length > 0,
      filters: properties.map((f) => compileFilter(f, flagIndex, aggregation)),
      rollout: group.rollout_percentage ?? 100,
      variant,
    }
  }

  const flags = live.map((flag, flagIndex): CompiledFlag => {
    const filters = flag.filters ?? {}
    const groups = filters.groups ?? [{ properties: filters.properties ?? [], rollout_percentage: flag.rollout_percentage ?? null }]
    const conditions = groups.map((g, i) => compileCondition(g, i, flag, flagIndex))
    const ordered = [...conditions.filter((c) => c.variant !== null), ...conditions.filter((c) => c.variant === null)]
    const variants = filters.multivariate?.variants ?? []
    const variantBounds: number[] = []
    let cumulative = 0
    for (const v of variants) {
      cumulative += v.rollout_percentage / 100
      variantBounds.push(cumulative)
    }
    const aggregation = filters.aggregation_group_type_index ?? null
    return {
      key: flag.key,
      id: flag.id,
      version: flag.version ?? null,
      active: flag.active,
      continuity: flag.ensure_experience_continuity === true,
      deviceBucketing: flag.bucketing_identifier === 'device_id',
      aggregation,
      groupTypeName: aggregation === null ? null : (mapping.get(aggregation) ?? null),
      conditions: ordered,
      variantKeys: variants.map((v) => v.key),
      variantBounds,
      payloads: filters.payloads ?? null,
      superCondition: compileSuper(flag, (g) => compileCondition({ ...g, aggregation_group_type_index: null }, 0, flag, flagIndex)),
      holdout: compileHoldout(flag),
      brokenDependency: false,
      outcomes: new Map(),
    }
  })
  for (const broken of findBrokenDependencies(dependencies)) flags[broken].brokenDependency = true
  return { flags, indexByKey, groupTypeNames: mapping, usesStaticCohorts, filterSlots: shared.size }
}

function compileSuper(flag: FlagDefinition, compile: (g: FlagConditionGroup) => CompiledCondition): CompiledSuper | null {
  if (flag.filters.feature_enrollment === true) return { kind: 'enrollment', propertyKey: `$feature_enrollment/${flag.key}` }
  const first = flag.filters.super_groups?.[0]
  if (!first || !first.properties || first.properties.length === 0) return null
  return { kind: 'legacy', keys: first.properties.map((p) => p.key), condition: compile(first) }
}

function compileHoldout(flag: FlagDefinition): CompiledHoldout | null {
  const holdout = flag.filters.holdout
  if (holdout && holdout.id != null && Number.isFinite(Number(holdout.exclusion_percentage))) {
    const percentage = Math.min(Math.max(Number(holdout.exclusion_percentage), 0), 100)
    return { percentage, variant: `holdout-${holdout.id}` }
  }
  const group = flag.filters.holdout_groups?.[0]
  if (!group) return null
  return { percentage: group.rollout_percentage ?? null, variant: group.variant ?? 'holdout' }
}

/**
 * `flag_evaluates_to`: `true` matches any enabled value (true or a variant), `false` only a
 * disabled flag, a string only that exact variant (Rust `match_flag_value_to_flag_filter`).
 */
export function flagEvaluatesTo(actual: boolean | string, expected: unknown): boolean {
  if (expected === true) return actual !== false && actual !== ''
  if (expected === false) return actual === false
  if (typeof expected === 'string') return actual === expected
  return false
}
