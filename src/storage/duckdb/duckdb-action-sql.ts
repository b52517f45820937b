import type { ActionStepDefinition } from '../../domain/actions/match-action.ts'
import { isElementFilterKey, isUsableFilter, stepFilters } from '../../domain/actions/match-action.ts'
import { parseSelector } from '../../domain/actions/match-selector.ts'
import { planStringMatch, type StringMatchPlan } from '../../domain/actions/string-match.ts'
import type { PropertyFilter } from '../../domain/properties/property-filter.ts'
import { anyElement, selectorSql, type SqlParams } from './duckdb-action-elements-sql.ts'
import { jsonSource, propertyFilterSql, toDuckDbRegex } from './duckdb-action-property-sql.ts'

/** An action as a SQL boolean over a row of `events` plus its parsed elements `__els` (when needed). */
export interface ActionSql {
  condition: string
  /** The condition reads `__els`: select `ELEMENTS_SQL AS __els` beside the row. */
  needsElements: boolean
}

const ELEMENT_FIELD_COLUMN = { tag_name: 'tag', text: 'text', href: 'href', attr_id: 'attr_id', nth_child: 'nth_child', nth_of_type: 'nth_of_type' } as const

/**
 * Compiles action steps into one parameterised DuckDB condition with the semantics of the domain's
 * `compileAction` (OR across steps, AND within one; no steps is FALSE). User values (names, urls,
 * patterns, property keys and values) are bound through `params`; regexes are checked with the
 * domain's RE2 first, and an invalid one compiles to FALSE as it matches nothing in the domain.
 * Regexes run in DuckDB's RE2, linear in the input. Throws `not_implemented` for a property
 * operator the SQL does not cover (`is_date_*`, `semver_*`).
 */
export function compileActionSql(steps: readonly ActionStepDefinition[], params: SqlParams): ActionSql {
  let needsElements = false
  const ors = steps.map((step) => {
    const ands: string[] = []
    if (step.url) {
      const url = jsonSource('properties', '$current_url', params)
      const plan = planStringMatch(step.url, step.url_matching, 'contains')
      ands.push(`(json_type(properties, ${params.add('/$current_url')}) = 'VARCHAR' AND ${url.text} <> '' AND ${stringMatchSql(plan, url.text, params)})`)
    }
    if (step.event) ands.push(`event = ${params.add(step.event)}`)
    if (step.href || step.tag_name || step.text) {
      needsElements = true
      ands.push(elementFieldsSql(step, params))
    }
    if (step.selector) {
      needsElements = true
      ands.push(selectorSql(parseSelector(step.selector), params))
    }
    for (const filter of stepFilters(step)) {
      const sql = stepFilterSql(filter, params)
      if (sql.needsElements) needsElements = true
      ands.push(sql.condition)
    }
    return ands.length === 0 ? 'TRUE' : `(${ands.join(' AND ')})`
  })
  return { condition: ors.length === 0 ? 'FALSE' : `(${ors.join(' OR ')})`, needsElements }
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

function stepFilterSql(filter: PropertyFilter, params: SqlParams): ActionSql {
  if (!isUsableFilter(filter)) return { condition: 'FALSE', needsElements: false }
  const type = filter.type ?? 'event'
  if (type === 'event') return { condition: propertyFilterSql(filter, jsonSource('properties', filter.key, params), params), needsElements: false }
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
