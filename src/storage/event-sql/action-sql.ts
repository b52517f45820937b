import type { ActionStepDefinition } from '../../domain/actions/match-action.ts'
import { isElementFilterKey, isUsableFilter, stepFilters } from '../../domain/actions/match-action.ts'
import { parseSelector } from '../../domain/actions/match-selector.ts'
import { requiredChainLiterals } from '../../domain/actions/chain-literals.ts'
import { planStringMatch, type StringMatchPlan } from '../../domain/actions/string-match.ts'
import { requiredMatchLiteral } from '../../domain/actions/string-literals.ts'
import type { PropertyFilter } from '../../domain/properties/property-filter.ts'
import { anyElement, selectorSql, type SqlParams } from './duckdb-action-elements-sql.ts'
import { jsonSource, propertyFilterSql, toDuckDbRegex } from './duckdb-action-property-sql.ts'
import { materializedColumn, materializedStringSql } from './materialized-properties.ts'

/** An action as a SQL boolean over a row of `events` plus its parsed elements `__els` (when needed). */
export interface ActionSql {
  condition: string
  /**
   * A necessary condition on the row's own columns (each step's element-free conditions, and the
   * texts its element constraints need in the raw chain): filter with it before parsing the chain.
   */
  prefilter: string
  /** The condition reads `__els`: select `ELEMENTS_SQL AS __els` beside the row. */
  needsElements: boolean
}

const ELEMENT_FIELD_COLUMN = { tag_name: 'tag', text: 'text', href: 'href', attr_id: 'attr_id', nth_child: 'nth_child', nth_of_type: 'nth_of_type' } as const

/**
 * Compiles action steps into one parameterised DuckDB condition with the semantics of the domain's
 * `compileAction` (OR across steps, AND within one; no steps is FALSE). User values (names, urls,
 * patterns, property keys and values) are bound through `params`; regexes are checked with the
 * domain's RE2 first, and an invalid one compiles to FALSE as it matches nothing in the domain.
 * Regexes run in DuckDB's RE2, linear in the input. Every property operator of the domain compiles
 * (relative dates at the wall clock); one the domain does not know is FALSE, as it matches nothing there.
 */
export function compileActionSql(steps: readonly ActionStepDefinition[], params: SqlParams): ActionSql {
  let needsElements = false
  const ors: string[] = []
  const stepParts: { cheap: string[]; literals: string[] }[] = []
  for (const step of steps) {
    // `cheap` reads no parsed element; `full` adds the element conditions.
    const cheap: string[] = []
    const full: string[] = []
    // Cheapest first: DuckDB evaluates an AND's terms in order, each on the rows the last kept.
    if (step.event) cheap.push(`event = ${params.add(step.event)}`)
    if (step.url) {
      // The url is a string `$current_url`: its materialized column when the value is a string (the
      // JSON is not read at all).
      const url = materializedStringSql('$current_url')!
      const needle = requiredMatchLiteral(step.url, step.url_matching, 'contains')
      if (needle !== undefined) cheap.push(`contains(${url}, ${params.add(needle)})`)
      const plan = planStringMatch(step.url, step.url_matching, 'contains')
      cheap.push(`(${url} <> '' AND ${stringMatchSql(plan, url, params)})`)
    }
    if (step.href || step.tag_name || step.text) full.push(elementFieldsSql(step, params))
    if (step.selector) full.push(selectorSql(parseSelector(step.selector), params))
    for (const filter of stepFilters(step)) {
      const sql = stepFilterSql(filter, params)
      ;(sql.needsElements ? full : cheap).push(sql.condition)
    }
    if (full.length > 0) needsElements = true
    const all = [...cheap, ...full]
    ors.push(all.length === 0 ? 'TRUE' : `(${all.join(' AND ')})`)
    stepParts.push({ cheap, literals: requiredChainLiterals(step) })
  }
  return { condition: ors.length === 0 ? 'FALSE' : `(${ors.join(' OR ')})`, prefilter: prefilterSql(stepParts, params), needsElements }
}


/** OR over the steps of their cheap conditions; literals are bound only when the result uses them. */
function prefilterSql(steps: { cheap: string[]; literals: string[] }[], params: SqlParams): string {
  if (steps.length === 0) return 'FALSE'
  if (steps.some((s) => s.cheap.length === 0 && s.literals.length === 0)) return 'TRUE'
  const ors = steps.map(({ cheap, literals }) => {
    const all = [...cheap, ...literals.map((text) => `contains(elements_chain, ${params.add(text)})`)]
    return `(${all.join(' AND ')})`
  })
  return `(${ors.join(' OR ')})`
}

function stringMatchSql(plan: StringMatchPlan, text: string, params: SqlParams): string {
  if (plan.kind === 'exact') return `(${text} = ${params.add(plan.value)})`
  if (plan.kind === 'regex') return `regexp_matches(${text}, ${params.add(toDuckDbRegex(plan.source))})`
  return 'FALSE'
}

function elementFieldsSql(step: ActionStepDefinition, params: SqlParams): string {
  const all: string[] = []
  if (step.href) all.push(stringMatchSql(planStringMatch(step.href, step.href_matching, 'exact'), `COALESCE(e.href, '')`, params))
  if (step.tag_name) all.push(`e.tag = ${params.add(step.tag_name)}`)
  if (step.text) all.push(stringMatchSql(planStringMatch(step.text, step.text_matching, 'exact'), `COALESCE(e.text, '')`, params))
  return anyElement(all.join(' AND '))
}

export function stepFilterSql(filter: PropertyFilter, params: SqlParams): { condition: string; needsElements: boolean } {
  if (!isUsableFilter(filter)) return { condition: 'FALSE', needsElements: false }
  const type = filter.type ?? 'event'
  if (type === 'event') return { condition: propertyFilterSql(filter, jsonSource('properties', filter.key, params, materializedColumn(filter.key)), params), needsElements: false }
  if (type === 'person') {
    const source = jsonSource(`COALESCE(person_properties, '{}')`, filter.key, params)
    return { condition: propertyFilterSql(filter, source, params), needsElements: false }
  }
  if (type === 'cohort') return { condition: filter.value === 'all' ? 'TRUE' : 'FALSE', needsElements: false }
  if (type !== 'element') return { condition: 'FALSE', needsElements: false }
  if (filter.key === 'selector') {
    const values = Array.isArray(filter.value) ? filter.value : [filter.value]
    const selectors = values.filter((v) => Boolean(v)).map((v) => selectorSql(parseSelector(String(v)), params))
    return { condition: selectors.length === 0 ? 'FALSE' : `(${selectors.join(' OR ')})`, needsElements: true }
  }
  if (!isElementFilterKey(filter.key)) return { condition: 'FALSE', needsElements: false }
  const column = `e.${ELEMENT_FIELD_COLUMN[filter.key]}`
  return { condition: anyElement(propertyFilterSql(filter, { present: `(${column} IS NOT NULL)`, text: column }, params)), needsElements: true }
}
