import type { ActionStepDefinition } from '../../domain/actions/match-action.ts'
import type { PropertyFilter } from '../../domain/properties/property-filter.ts'
import type { Expr, Plan } from '../../domain/query/query-plan.ts'

const isRegexFilter = (f: PropertyFilter): boolean => f.operator === 'regex' || f.operator === 'not_regex'
const isRegexStep = (s: ActionStepDefinition): boolean =>
  (Boolean(s.url) && s.url_matching === 'regex') || (Array.isArray(s.properties) && s.properties.some(isRegexFilter))

/**
 * Whether a plan evaluates a client's regular expression (a `regex`/`not_regex` property filter, an
 * action step matching its url or a property by regex), at any depth. RE2 is linear, but its cost per
 * row grows with the pattern's program and the value's length: an engine that checks its time limit
 * and cancellation only between blocks of rows (ClickHouse) runs such statements in small blocks.
 */
export function readsUserRegex(plan: Plan): boolean {
  const s = plan.source
  const sources = s.kind === 'events' || s.kind === 'session_partials' ? [] : s.kind === 'join' ? [s.left, s.right] : [s.plan]
  const exprs = [...plan.select.map((i) => i.expr), plan.where, plan.having, ...(plan.groupBy ?? []), ...(plan.orderBy ?? []).map((o) => o.expr)]
  return sources.some(readsUserRegex) || exprs.some((e) => e !== undefined && exprReadsRegex(e))
}

function exprReadsRegex(e: Expr): boolean {
  switch (e.op) {
    case 'property_filter':
      return isRegexFilter(e.filter)
    case 'action':
      return e.steps.some(isRegexStep)
    case 'in_plan':
      return exprReadsRegex(e.arg) || readsUserRegex(e.plan)
    default:
      return children(e).some(exprReadsRegex)
  }
}

/** The sub-expressions of an expression (one generic walk: a new operation with children is found by its fields). */
function children(e: Expr): Expr[] {
  const out: Expr[] = []
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit)
    else if (v !== null && typeof v === 'object' && typeof (v as { op?: unknown }).op === 'string') out.push(v as Expr)
    else if (v !== null && typeof v === 'object' && !(v instanceof Date)) Object.values(v).forEach(visit)
  }
  for (const [key, value] of Object.entries(e)) if (key !== 'op' && key !== 'filter' && key !== 'steps' && key !== 'plan') visit(value)
  return out
}
