import type { ActionStepDefinition } from '../../domain/actions/match-action.ts'
import { isElementFilterKey, isUsableFilter, stepFilters } from '../../domain/actions/match-action.ts'
import { parseSelector } from '../../domain/actions/match-selector.ts'
import { requiredChainLiterals } from '../../domain/actions/chain-literals.ts'
import { planStringMatch, type StringMatchPlan } from '../../domain/actions/string-match.ts'
import { requiredMatchLiteral } from '../../domain/actions/string-literals.ts'
import type { PropertyFilter } from '../../domain/properties/property-filter.ts'
import type { ElementField, EventDialect } from './event-dialect.ts'
import { selectorSql } from './elements-sql.ts'
import { propertyFilterSql } from './property-filter-sql.ts'
import type { SqlParams } from './sql-params.ts'

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

const ELEMENT_FIELD = { tag_name: 'tag', text: 'text', href: 'href', attr_id: 'attr_id', nth_child: 'nth_child', nth_of_type: 'nth_of_type' } as const satisfies Record<string, ElementField>

/**
 * Compiles action steps into one condition of the dialect with the semantics of the domain's
 * `compileAction` (OR across steps, AND within one; no steps is FALSE). User values (names, urls,
 * patterns, property keys and values) are bound through `params`; regexes are checked with the
 * domain's RE2 first, and an invalid one compiles to FALSE as it matches nothing in the domain.
 * Regexes run in the engine's RE2, linear in the input. Every property operator of the domain compiles
 * (relative dates at the wall clock); one the domain does not know is FALSE, as it matches nothing there.
 */
export function compileActionSql(steps: readonly ActionStepDefinition[], d: EventDialect, params: SqlParams): ActionSql {
  let needsElements = false
  const ors: string[] = []
  const stepParts: { cheap: string[]; literals: string[] }[] = []
  for (const step of steps) {
    // `cheap` reads no parsed element; `full` adds the element conditions.
    const cheap: string[] = []
    const full: string[] = []
    // Cheapest first: DuckDB (and ClickHouse's short-circuit AND) evaluates an AND's terms in order, each on the rows the last kept.
    if (step.event) cheap.push(`event = ${params.add(step.event)}`)
    if (step.url) {
      // The url is a string `$current_url`: its materialized column when the value is a string (the
      // JSON is not read at all).
      const url = d.stringProperty('$current_url', params)
      const needle = requiredMatchLiteral(step.url, step.url_matching, 'contains')
      if (needle !== undefined) cheap.push(d.contains(url, params.add(needle)))
      const plan = planStringMatch(step.url, step.url_matching, 'contains')
      cheap.push(`(${url} <> '' AND ${stringMatchSql(plan, url, d, params)})`)
    }
    if (step.href || step.tag_name || step.text) full.push(elementFieldsSql(step, d, params))
    if (step.selector) full.push(selectorSql(parseSelector(step.selector), d, params))
    for (const filter of stepFilters(step)) {
      const sql = stepFilterSql(filter, d, params)
      ;(sql.needsElements ? full : cheap).push(sql.condition)
    }
    if (full.length > 0) needsElements = true
    const all = [...cheap, ...full]
    ors.push(all.length === 0 ? d.bool(true) : `(${all.join(' AND ')})`)
    stepParts.push({ cheap, literals: requiredChainLiterals(step) })
  }
  return { condition: ors.length === 0 ? d.bool(false) : `(${ors.join(' OR ')})`, prefilter: prefilterSql(stepParts, d, params), needsElements }
}


/** OR over the steps of their cheap conditions; literals are bound only when the result uses them. */
function prefilterSql(steps: { cheap: string[]; literals: string[] }[], d: EventDialect, params: SqlParams): string {
  if (steps.length === 0) return d.bool(false)
  if (steps.some((s) => s.cheap.length === 0 && s.literals.length === 0)) return d.bool(true)
  const ors = steps.map(({ cheap, literals }) => {
    const all = [...cheap, ...literals.map((text) => d.contains('elements_chain', params.add(text)))]
    return `(${all.join(' AND ')})`
  })
  return `(${ors.join(' OR ')})`
}

function stringMatchSql(plan: StringMatchPlan, text: string, d: EventDialect, params: SqlParams): string {
  if (plan.kind === 'exact') return `(${text} = ${params.add(plan.value)})`
  if (plan.kind === 'regex') return d.regexMatch(text, params.add(d.regexSource(plan.source)))
  return d.bool(false)
}

function elementFieldsSql(step: ActionStepDefinition, d: EventDialect, params: SqlParams): string {
  return d.elements.any((el) => {
    const all: string[] = []
    if (step.href) all.push(stringMatchSql(planStringMatch(step.href, step.href_matching, 'exact'), `COALESCE(${el.field('href')}, '')`, d, params))
    if (step.tag_name) all.push(`${el.field('tag')} = ${params.add(step.tag_name)}`)
    if (step.text) all.push(stringMatchSql(planStringMatch(step.text, step.text_matching, 'exact'), `COALESCE(${el.field('text')}, '')`, d, params))
    return all.join(' AND ')
  })
}

/**
 * One property filter of an action step or a query (event, person, element or cohort `all`) as a
 * condition; `needsElements` when it reads the parsed chain.
 */
export function stepFilterSql(filter: PropertyFilter, d: EventDialect, params: SqlParams): { condition: string; needsElements: boolean } {
  const no = { condition: d.bool(false), needsElements: false }
  if (!isUsableFilter(filter)) return no
  const type = filter.type ?? 'event'
  if (type === 'event' || type === 'person') {
    return { condition: propertyFilterSql(filter, d.propertyValue(type, filter.key, params), d, params), needsElements: false }
  }
  if (type === 'cohort') return { condition: d.bool(filter.value === 'all'), needsElements: false }
  if (type !== 'element') return no
  if (filter.key === 'selector') {
    const values = Array.isArray(filter.value) ? filter.value : [filter.value]
    const selectors = values.filter((v) => Boolean(v)).map((v) => selectorSql(parseSelector(String(v)), d, params))
    return { condition: selectors.length === 0 ? d.bool(false) : `(${selectors.join(' OR ')})`, needsElements: true }
  }
  if (!isElementFilterKey(filter.key)) return no
  const field = ELEMENT_FIELD[filter.key]
  return {
    condition: d.elements.any((el) => propertyFilterSql(filter, { present: `(${el.field(field)} IS NOT NULL)`, text: el.field(field) }, d, params)),
    needsElements: true,
  }
}
