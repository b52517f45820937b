import type { FlagFilters } from '../../domain/flags/flag-types.ts'
import type { PropertyFilter } from '../../domain/properties/property-filter.ts'
import { parseFilterDate } from '../../domain/properties/property-date.ts'
import { validationError } from '../../shared/errors.ts'
import type { Cohort } from '../cohorts/cohort-types.ts'
import { flagFilters } from '../../domain/flags/flag-filters.ts'
import { isPropertyOperator, KNOWN_OPERATORS, PROPERTY_OPERATORS } from '../../domain/properties/property-operators.ts'
import { dependencyGraph, withDependents } from '../../domain/flags/flag-dependencies.ts'

// PostHog's FeatureFlagSerializer rules (posthog/api/feature_flag.py): every failure is a 400
// validation_error; `attr` is `key` or `filters` as there.


export interface FilterContext {
  /** Live cohorts of the project, by id. */
  cohorts: ReadonlyMap<number, Cohort>
  /** Ids of the project's live flags (targets of flag dependencies), with their filters. */
  flags: ReadonlyMap<number, { key: string; filters: FlagFilters }>
  /** The id of the flag being updated, if any. */
  selfId: number | null
}

const invalid = (detail: string, code = 'invalid_input') => validationError('filters', detail, code)

/** Checks `filters` as PostHog does and returns it; throws a validation error naming `filters`. */
export function validateFilters(raw: unknown, ctx: FilterContext): FlagFilters {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalid('Filters must be an object.')
  const filters = raw as FlagFilters
  for (const name of ['groups', 'super_groups', 'holdout_groups'] as const) {
    if (filters[name] != null && !Array.isArray(filters[name])) throw invalid(`Filters are not valid (${name} must be a list)`)
  }
  const aggregation = filters.aggregation_group_type_index ?? null
  if (aggregation !== null && !(Number.isInteger(aggregation) && aggregation >= 0 && aggregation <= 4)) {
    throw invalid('Filters are not valid (aggregation_group_type_index must be between 0 and 4)')
  }
  const variants = validateVariants(filters)
  for (const group of [...(filters.groups ?? []), ...(filters.super_groups ?? []), ...(filters.holdout_groups ?? [])]) {
    if (group === null || typeof group !== 'object') throw invalid('Filters are not valid (groups must be objects)')
    if (group.properties != null && !Array.isArray(group.properties)) throw invalid('Filters are not valid (properties must be a list)')
    const rollout = group.rollout_percentage
    if (rollout != null && !(typeof rollout === 'number' && rollout >= 0 && rollout <= 100)) {
      throw invalid('Filters are not valid (rollout_percentage must be a number between 0 and 100)')
    }
    if (group.variant != null && !variants.includes(group.variant)) {
      throw invalid('Filters are not valid (variant override does not exist)')
    }
  }
  for (const { filter, aggregation: conditionAggregation } of flagFilters(filters)) {
    validateProperty(filter, conditionAggregation, ctx)
  }
  validatePayloads(filters, variants)
  return filters
}

function validateVariants(filters: FlagFilters): string[] {
  const multivariate = filters.multivariate
  if (multivariate == null) return []
  const variants = multivariate.variants
  if (!Array.isArray(variants)) throw invalid('Invalid variant definitions: variants must be a list.')
  let total = 0
  const keys: string[] = []
  for (const v of variants) {
    if (!v || typeof v.key !== 'string' || v.key === '') throw invalid('Invalid variant definitions: every variant needs a key.')
    if (typeof v.rollout_percentage !== 'number' || v.rollout_percentage < 0 || v.rollout_percentage > 100) {
      throw invalid('Invalid variant definitions: Variant rollout percentages must be numbers between 0 and 100.')
    }
    if (keys.includes(v.key)) throw invalid('Invalid variant definitions: Variant keys must be unique.')
    keys.push(v.key)
    total += v.rollout_percentage
  }
  if (variants.length > 0 && Math.abs(total - 100) > 1e-9) {
    throw invalid('Invalid variant definitions: Variant rollout percentages must sum to 100.')
  }
  return keys
}

function validateProperty(p: PropertyFilter, aggregation: number | null, ctx: FilterContext): void {
  if (p === null || typeof p !== 'object' || typeof p.key !== 'string') throw invalid('Filters are not valid (every property needs a key)')
  const type = p.type ?? 'person'
  const operator = p.operator ?? 'exact'
  if (aggregation !== null) {
    if (type !== 'group' || p.group_type_index !== aggregation) throw invalid('Filters are not valid (can only use group properties)')
  } else if (!['person', 'cohort', 'flag'].includes(type)) {
    throw invalid('Filters are not valid (can only use person, cohort, and flag properties)')
  }
  if (!KNOWN_OPERATORS.has(operator)) throw invalid(`Invalid operator: ${operator}`, 'invalid_operator')
  if (Array.isArray(p.value) && p.value.length > 1000) throw invalid('Property group expressions of type value cannot have more than 1000 items.')
  if (isPropertyOperator(operator) && PROPERTY_OPERATORS[operator].flagsWantString && typeof p.value !== 'string') {
    throw invalid(`Invalid value for operator ${operator}: ${JSON.stringify(p.value)}`, 'invalid_value')
  }
  if ((operator === 'is_date_before' || operator === 'is_date_after') && parseFilterDate(p.value) === null) {
    throw invalid(`Invalid date value: ${JSON.stringify(p.value)}`, 'invalid_date')
  }
  if (type === 'cohort') validateCohortReference(p, ctx)
  if (type === 'flag') validateFlagDependency(p, ctx)
}

function validateCohortReference(p: PropertyFilter, ctx: FilterContext): void {
  const cohort = ctx.cohorts.get(Number(p.value))
  if (!cohort) throw invalid(`Cohort with id ${String(p.value)} does not exist`, 'cohort_does_not_exist')
  if (JSON.stringify(cohort.filters ?? cohort.groups).includes('"behavioral"')) {
    throw invalid(`Cohort '${cohort.name}' with filters on events cannot be used in feature flags.`, 'behavioral_cohort_found')
  }
}

function validateFlagDependency(p: PropertyFilter, ctx: FilterContext): void {
  if (p.operator !== 'flag_evaluates_to') throw invalid('Invalid operator for flag property: must be flag_evaluates_to')
  const id = Number(p.key)
  if (!Number.isInteger(id) || !ctx.flags.has(id)) throw invalid(`Flag dependency references non-existent flag with ID ${p.key}`)
  if (id === ctx.selfId) throw invalid('Circular dependency detected: a flag cannot depend on itself')
  // The target depending, directly or not, on this flag would close a cycle.
  if (ctx.selfId !== null) {
    const nodes = [...ctx.flags].map(([flagId, f]) => ({ id: flagId, ...f }))
    const self = nodes.findIndex((n) => n.id === ctx.selfId)
    const target = nodes.findIndex((n) => n.id === id)
    if (self >= 0 && withDependents(dependencyGraph(nodes), [self]).has(target)) {
      throw invalid(`Circular dependency detected: ${ctx.flags.get(id)!.key}`)
    }
  }
}

function validatePayloads(filters: FlagFilters, variants: string[]): void {
  const payloads = filters.payloads
  if (payloads == null) return
  if (typeof payloads !== 'object' || Array.isArray(payloads)) throw invalid('Payloads must be passed as a dictionary')
  for (const [key, value] of Object.entries(payloads)) {
    if (variants.length > 0 && !variants.includes(key)) throw invalid('Payload keys must match a variant key for multivariate flags')
    if (variants.length === 0 && key !== 'true') throw invalid("Payload keys must be 'true' for boolean flags")
    if (typeof value === 'string') {
      try {
        JSON.parse(value)
      } catch {
        throw invalid('Payload value is not valid JSON')
      }
    }
  }
}
