import { validationError } from '../../../shared/errors.ts'
import { compileRegex } from '../../properties/compile-regex.ts'
import type { DateRangeInput } from '../date-range.ts'
import { readArray, readFlag, readInteger, readNode, readText, type Node } from '../query-fields.ts'
import { readDateRange } from '../trends-query.ts'

/** PostHog's `PathType`: which events a path is made of. */
export const PATH_TYPES = ['$pageview', '$screen', 'custom_event', 'hogql'] as const
export type PathType = (typeof PATH_TYPES)[number]

/** A path cleaning rule (PostHog's `PathCleaningFilter`): every match of `regex` becomes `alias`. */
export interface PathCleaningRule {
  regex: string
  alias: string
}

/** Defaults of PostHog's paths runner (`paths_query_runner.py`). */
export const PATHS_DEFAULTS = { stepLimit: 5, edgeLimit: 50 } as const

export interface PathsQuery {
  dateRange: DateRangeInput | undefined
  properties: unknown
  filterTestAccounts: boolean
  includeEventTypes: PathType[]
  excludeEvents: string[]
  startPoint: string | null
  endPoint: string | null
  /** Wildcard groupings (`*` any text): a path item matching one becomes the grouping's text. */
  pathGroupings: string[]
  /** Apply the project's `path_cleaning_filters` (before the query's own rules). */
  pathReplacements: boolean
  localPathCleaningFilters: PathCleaningRule[]
  stepLimit: number
  edgeLimit: number
  minEdgeWeight: number | null
  maxEdgeWeight: number | null
  /** Actors of a path edge: those who went from / to these keys, or dropped off at one. */
  pathStartKey: string | null
  pathEndKey: string | null
  pathDropoffKey: string | null
}

/** Reads a `PathsQuery` node (PostHog's `PathsQuery` + `PathsFilter`); errors name the field under `attr`. */
export function readPathsQuery(node: Node, attr = 'query'): PathsQuery {
  const f = readNode(node.pathsFilter, `${attr}.pathsFilter`, { optional: true }) ?? {}
  const fa = `${attr}.pathsFilter`
  const types = readArray(f.includeEventTypes, `${fa}.includeEventTypes`, { optional: true }).map((t, i) => {
    if (typeof t !== 'string' || !(PATH_TYPES as readonly string[]).includes(t)) {
      throw validationError(`${fa}.includeEventTypes.${i}`, `"${String(t)}" is not a valid choice (${PATH_TYPES.join(', ')}).`, 'invalid_choice')
    }
    return t as PathType
  })
  if (types.includes('hogql')) throw validationError(`${fa}.includeEventTypes`, 'HogQL path expressions are not supported by Tally yet.', 'unsupported')
  if (node.funnelPathsFilter !== undefined && node.funnelPathsFilter !== null) {
    throw validationError(`${attr}.funnelPathsFilter`, 'Funnel paths are not supported by Tally yet.', 'unsupported')
  }
  const texts = (v: unknown, a: string) => readArray(v, a, { optional: true }).map((x, i) => readText(x, `${a}.${i}`)!)
  const rules = readArray(f.localPathCleaningFilters, `${fa}.localPathCleaningFilters`, { optional: true }).map((r, i) => readCleaningRule(r, `${fa}.localPathCleaningFilters.${i}`))
  const weight = (v: unknown, a: string) => {
    const n = readInteger(v, a, { min: 0 })
    return n === undefined || n === 0 ? null : n // PostHog ignores a 0 weight (`if minEdgeWeight:`)
  }
  const key = (v: unknown, a: string) => readText(v, a, { optional: true }) || null
  return {
    dateRange: readDateRange(node.dateRange, `${attr}.dateRange`),
    properties: node.properties,
    filterTestAccounts: readFlag(node.filterTestAccounts, `${attr}.filterTestAccounts`),
    includeEventTypes: types,
    excludeEvents: texts(f.excludeEvents, `${fa}.excludeEvents`),
    startPoint: key(f.startPoint, `${fa}.startPoint`),
    endPoint: key(f.endPoint, `${fa}.endPoint`),
    pathGroupings: texts(f.pathGroupings, `${fa}.pathGroupings`),
    pathReplacements: readFlag(f.pathReplacements, `${fa}.pathReplacements`),
    localPathCleaningFilters: rules,
    // PostHog: `stepLimit or 5`, `edgeLimit or 50` (0 means the default).
    stepLimit: readInteger(f.stepLimit, `${fa}.stepLimit`, { min: 0, max: 20 }) || PATHS_DEFAULTS.stepLimit,
    edgeLimit: readInteger(f.edgeLimit, `${fa}.edgeLimit`, { min: 0, max: 10_000 }) || PATHS_DEFAULTS.edgeLimit,
    minEdgeWeight: weight(f.minEdgeWeight, `${fa}.minEdgeWeight`),
    maxEdgeWeight: weight(f.maxEdgeWeight, `${fa}.maxEdgeWeight`),
    pathStartKey: key(f.pathStartKey, `${fa}.pathStartKey`),
    pathEndKey: key(f.pathEndKey, `${fa}.pathEndKey`),
    pathDropoffKey: key(f.pathDropoffKey, `${fa}.pathDropoffKey`),
  }
}

/** One cleaning rule `{regex, alias}`; the regex must compile with RE2 (a 400 naming it otherwise). */
export function readCleaningRule(v: unknown, attr: string): PathCleaningRule {
  const n = readNode(v, attr)
  const regex = readText(n.regex, `${attr}.regex`)!
  const alias = readText(n.alias, `${attr}.alias`, { nullable: true }) ?? ''
  if (compileRegex(regex) === null) throw validationError(`${attr}.regex`, `"${regex}" is not a valid regular expression (RE2 syntax).`, 'invalid_input')
  return { regex, alias }
}
