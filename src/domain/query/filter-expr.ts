import { validationError } from '../../shared/errors.ts'
import { isPropertyGroup, type PropertyFilter, type PropertyGroup } from '../properties/property-filter.ts'
import { EVENT_SQL_OPERATORS } from '../properties/property-operators.ts'
import { filterLeaves, readArray, readNode, readText, type Node } from './query-fields.ts'
import type { Expr } from './query-plan.ts'
import { behavioralExpr, type BehavioralInputs } from './behavioral-expr.ts'
import { checkLength, QUERY_BOUNDS } from './query-bounds.ts'

/**
 * A cohort as a query filter reads it: dynamic (person property and behavioural criteria) or static
 * (member persons).
 */
export interface QueryCohort {
  id: number
  name: string
  properties: PropertyGroup | null
  isStatic: boolean
  /** Person UUIDs of a static cohort's members. */
  personIds: readonly string[]
  /** What behavioural criteria read besides their fields; set on dynamic cohorts loaded for a query. */
  behavioral?: BehavioralInputs
}

const FILTER_TYPES = ['event', 'person', 'element', 'cohort'] as const

/** Cohort ids named by the filters (a list or PostHog's nested `PropertyGroupFilter`), to load before building. */
export function cohortIdsOf(properties: unknown): number[] {
  const ids = filterLeaves(properties).flatMap((n) => {
    // A behavioural criterion's own event filters may name cohorts too.
    if (n.type === 'behavioral') return cohortIdsOf(n.event_filters)
    const isId = typeof n.value === 'number' || (typeof n.value === 'string' && /^\d+$/.test(n.value))
    return n.type === 'cohort' && isId ? [Number(n.value)] : []
  })
  return [...new Set(ids)]
}

/**
 * Property filters of a query (a list, AND-ed, or a nested AND/OR group) as one boolean expression,
 * with the shared operator semantics; `undefined` when there are none. Cohort filters expand to
 * their definition (person properties) or to their members (static cohorts).
 */
export function filtersToExpr(properties: unknown, attr: string, cohorts: ReadonlyMap<number, QueryCohort>): Expr | undefined {
  if (properties === undefined || properties === null) return undefined
  if (Array.isArray(properties)) {
    checkLength(properties, QUERY_BOUNDS.filters, attr, 'property filters')
    const parts = properties.map((p, i) => filterOrGroup(p, `${attr}.${i}`, cohorts, 0))
    return parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : { op: 'and', args: parts }
  }
  return filterOrGroup(properties, attr, cohorts, 0)
}

function filterOrGroup(v: unknown, attr: string, cohorts: ReadonlyMap<number, QueryCohort>, depth: number): Expr {
  const node = readNode(v, attr)
  if (depth > 10) throw validationError(attr, 'Property groups nest too deeply.', 'invalid_input')
  if (Array.isArray(node.values)) {
    const type = node.type === 'OR' ? 'or' : 'and'
    if (node.type !== undefined && node.type !== 'AND' && node.type !== 'OR') throw validationError(`${attr}.type`, `"${String(node.type)}" is not a valid choice (AND, OR).`, 'invalid_choice')
    checkLength(node.values, QUERY_BOUNDS.filters, `${attr}.values`, 'property filters')
    const args = readArray(node.values, `${attr}.values`).map((c, i) => filterOrGroup(c, `${attr}.values.${i}`, cohorts, depth + 1))
    return { op: type, args }
  }
  return filterExpr(node, attr, cohorts, depth)
}

function filterExpr(node: Node, attr: string, cohorts: ReadonlyMap<number, QueryCohort>, depth: number): Expr {
  const type = (node.type ?? 'event') as string
  if (!(FILTER_TYPES as readonly string[]).includes(type)) {
    throw validationError(`${attr}.type`, `Property filters of type "${type}" are not supported (${FILTER_TYPES.join(', ')}).`, 'invalid_choice')
  }
  if (type === 'cohort') {
    const id = Number(node.value)
    const cohort = cohorts.get(id)
    if (!cohort) throw validationError(`${attr}.value`, `Cohort ${String(node.value)} does not exist.`, 'cohort_does_not_exist')
    const expr = cohortExpr(cohort, attr, cohorts, depth)
    return node.operator === 'not_in' || node.negation === true ? { op: 'not', arg: expr } : expr
  }
  const key = readText(node.key, `${attr}.key`)!
  const operator = node.operator ?? 'exact'
  if (typeof operator !== 'string' || !(EVENT_SQL_OPERATORS as readonly string[]).includes(operator)) {
    throw validationError(`${attr}.operator`, `"${String(operator)}" is not a supported operator.`, 'invalid_choice')
  }
  if (Array.isArray(node.value)) checkLength(node.value, QUERY_BOUNDS.filterValues, `${attr}.value`, 'values')
  const filter: PropertyFilter = { key, type, operator, value: node.value }
  const expr: Expr = { op: 'property_filter', filter }
  return node.negation === true ? { op: 'not', arg: expr } : expr
}

/** A cohort's membership as an expression over the event's person. */
function cohortExpr(cohort: QueryCohort, attr: string, cohorts: ReadonlyMap<number, QueryCohort>, depth: number): Expr {
  if (cohort.isStatic) {
    return { op: 'in', arg: { op: 'to_text', arg: { op: 'person_id' } }, values: [...cohort.personIds] }
  }
  if (!cohort.properties) return { op: 'literal', value: false }
  return cohortGroupExpr(cohort.properties, { attr, cohorts, cohort }, depth + 1)
}

function cohortGroupExpr(group: PropertyGroup | PropertyFilter, at: { attr: string; cohorts: ReadonlyMap<number, QueryCohort>; cohort: QueryCohort }, depth: number): Expr {
  const { attr, cohorts } = at
  if (depth > 10) throw validationError(attr, 'Cohorts nest too deeply.', 'invalid_input')
  if (isPropertyGroup(group)) {
    const args = group.values.map((v) => cohortGroupExpr(v, at, depth + 1))
    return { op: group.type === 'OR' ? 'or' : 'and', args }
  }
  if (group.type === 'behavioral') {
    const node = group as unknown as Node
    if (!at.cohort.behavioral) throw new Error(`cohort ${at.cohort.id} was loaded without its behavioural inputs`)
    const eventFilters = filtersToExpr(node.event_filters, `${attr}.event_filters`, cohorts)
    const expr = behavioralExpr(node, attr, at.cohort.behavioral, eventFilters)
    return node.negation === true ? { op: 'not', arg: expr } : expr
  }
  if (group.type !== 'person' && group.type !== 'cohort') {
    throw validationError(attr, `Cohorts with "${String(group.type)}" criteria cannot be used as query filters (person properties and behavioral only).`, 'invalid_input')
  }
  return filterExpr(group as unknown as Node, attr, cohorts, depth)
}
