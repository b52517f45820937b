import { compilePropertyFilter } from '../properties/match-property.ts'
import { isPropertyGroup } from '../properties/property-filter.ts'
import type { PropertyFilter, PropertyGroup } from '../properties/property-filter.ts'
import type { CohortDefinition } from './flag-types.ts'
import type { EnvMatcher } from './eval-env.ts'

const alwaysFalse: EnvMatcher = () => false
const alwaysTrue: EnvMatcher = () => true

/**
 * Compiles cohorts into matchers over the person. Dynamic cohorts evaluate their nested AND/OR
 * property groups against person properties (cohort-in-cohort included; a reference cycle
 * matches nothing); static cohorts check the caller's membership list. Missing or deleted
 * cohorts match nothing, like PostHog. Behavioural (event-based) leaves cannot be decided from
 * properties and count as not matching.
 */
export function createCohortCompiler(cohorts: readonly CohortDefinition[]): (id: unknown) => EnvMatcher {
  const byId = new Map<string, CohortDefinition>()
  for (const cohort of cohorts) byId.set(String(cohort.id), cohort)
  const compiled = new Map<string, EnvMatcher>()

  function compileCohort(id: string, stack: ReadonlySet<string>): EnvMatcher {
    const cached = compiled.get(id)
    if (cached) return cached
    const cohort = byId.get(id)
    if (!cohort || cohort.deleted) return alwaysFalse
    if (stack.has(id)) return alwaysFalse
    let matcher: EnvMatcher
    if (cohort.is_static) {
      matcher = (env) => env.staticCohorts.has(id)
    } else {
      const inner = new Set(stack).add(id)
      matcher = compileNode(cohortRoot(cohort), inner)
    }
    if (stack.size === 0) compiled.set(id, matcher)
    return matcher
  }

  function compileNode(node: PropertyGroup | PropertyFilter, stack: ReadonlySet<string>): EnvMatcher {
    if (isPropertyGroup(node)) return compileGroup(node, stack)
    const negate = node.negation === true
    if (node.type === 'cohort') {
      const inCohort = compileCohort(String(node.value), stack)
      const flip = negate !== (node.operator === 'not_in')
      return flip ? (env) => !inCohort(env) : inCohort
    }
    if (node.type === 'behavioral' || node.type === 'flag') return alwaysFalse
    const match = compilePropertyFilter(node)
    return negate ? (env) => !match(env.person, env.now) : (env) => match(env.person, env.now)
  }

  function compileGroup(group: PropertyGroup, stack: ReadonlySet<string>): EnvMatcher {
    const isOr = group.type === 'OR'
    const parts = group.values.map((v) => compileNode(v, stack))
    if (parts.length === 0) return isOr ? alwaysFalse : alwaysTrue
    if (parts.length === 1) return parts[0]
    return isOr ? (env) => parts.some((p) => p(env)) : (env) => parts.every((p) => p(env))
  }

  return (id) => compileCohort(String(id), new Set())
}

/**
 * The root property group of a dynamic cohort: `filters.properties`, or the legacy `groups` list
 * read as an OR of ANDs. A legacy group that is not a property list (pre-2022 dict-shaped or
 * action-based) becomes a behavioural filter, which no property matcher can decide: it matches
 * nothing here, and local-evaluation SDKs that receive it defer to the server.
 */
export function cohortRoot(cohort: CohortDefinition): PropertyGroup {
  const properties = cohort.filters?.properties
  if (properties && Array.isArray(properties.values)) return properties
  const groups = cohort.groups ?? []
  return {
    type: 'OR',
    values: groups.map((g) => ({
      type: 'AND',
      // Pre-2022 dict-shaped or action-based groups cannot be evaluated from properties.
      values: Array.isArray(g.properties) ? (g.properties as PropertyFilter[]) : [{ key: '', type: 'behavioral' }],
    })),
  }
}
