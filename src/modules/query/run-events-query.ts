import { resolveInstant } from '../../domain/query/date-range.ts'
import { readEventsQuery, STAR_FIELDS, type EventsColumn } from '../../domain/query/events-query.ts'
import { filtersToExpr } from '../../domain/query/filter-expr.ts'
import { and, col, eq, fromEvents, lit, type Expr, type Plan, type SelectItem } from '../../domain/query/query-plan.ts'
import { formatInZone } from '../../domain/query/zoned-time.ts'
import { validationError } from '../../shared/errors.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'
import { loadCohorts } from './query-helpers.ts'

const parseJson = (text: unknown): unknown => {
  if (typeof text !== 'string') return text ?? null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** `EventsQuery`: the events table with chosen columns, filters, aggregates, order and a page (`hasMore`). */
export async function runEventsQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const q = readEventsQuery(node)
  const cohorts = await loadCohorts(ctx, [q.properties])
  const aggregated = q.select.some((c) => c.kind === 'expr' && c.aggregate)
  const select: SelectItem[] = []
  q.select.forEach((c, i) => {
    if (aggregated && c.kind !== 'expr') throw validationError(`query.select.${i}`, `"${c.text}" cannot be selected beside an aggregate.`, 'invalid_input')
    if (c.kind === 'star') for (const f of STAR_FIELDS) select.push({ alias: `c${i}_${f}`, expr: f === 'uuid' ? { op: 'to_text', arg: col(f) } : col(f) })
    else if (c.kind === 'person') {
      select.push({ alias: `c${i}_id`, expr: { op: 'to_text', arg: { op: 'person_id' } } })
      select.push({ alias: `c${i}_properties`, expr: { op: 'properties', source: 'person' } })
      select.push({ alias: `c${i}_distinct_id`, expr: col('distinct_id') })
    } else select.push({ alias: `c${i}`, expr: c.expr })
  })
  const order = q.orderBy.length > 0 ? q.orderBy : defaultOrder(q.select, aggregated)
  const orderBy = order.map((o, i) => {
    const expr = (o.column as Extract<EventsColumn, { kind: 'expr' }>).expr
    // Ordered by something not selected: select it too (hidden), so the statement can name it by position.
    if (!select.some((s) => JSON.stringify(s.expr) === JSON.stringify(expr))) select.push({ alias: `o${i}`, expr })
    return { expr, desc: o.desc }
  })
  const plan: Plan = {
    source: fromEvents(),
    select,
    where: and(...(await conditions(ctx, q, cohorts))),
    groupBy: aggregated ? q.select.filter((c) => c.kind === 'expr' && !c.aggregate).map((c) => (c as { expr: Expr }).expr) : undefined,
    orderBy,
    limit: q.limit + 1,
    offset: q.offset,
  }
  const { rows } = await ctx.run(plan)
  const results = rows.slice(0, q.limit).map((r) => q.select.map((c, i) => cell(c, i, r, ctx.timeZone)))
  return {
    columns: q.select.map((c) => c.text),
    types: q.select.map((c) => (c.kind === 'expr' ? c.type : 'Tuple')),
    results,
    hasMore: rows.length > q.limit,
    limit: q.limit,
    offset: q.offset,
  }
}

function defaultOrder(select: EventsColumn[], aggregated: boolean): Array<{ column: EventsColumn; desc: boolean }> {
  const first = select.find((c) => c.kind === 'expr' && c.aggregate)
  if (aggregated) return first ? [{ column: first, desc: true }] : []
  return [{ column: { kind: 'expr', text: 'timestamp', expr: col('timestamp'), aggregate: false, type: '' }, desc: true }]
}

async function conditions(ctx: QueryContext, q: ReturnType<typeof readEventsQuery>, cohorts: Awaited<ReturnType<typeof loadCohorts>>): Promise<Array<Expr | undefined>> {
  const out: Array<Expr | undefined> = [filtersToExpr(q.properties, 'query.properties', cohorts), ...q.where]
  if (q.event) out.push(eq(col('event'), lit(q.event)))
  if (q.actionId !== null) out.push({ op: 'action', steps: (await ctx.action(q.actionId, 'query.actionId')).steps })
  if (q.personId) out.push(eq({ op: 'to_text', arg: { op: 'person_id' } }, lit(q.personId)))
  if (q.after) out.push({ op: 'binary', fn: '>', left: col('timestamp'), right: { op: 'time', value: resolveInstant(q.after, ctx.now, ctx.timeZone, 'query.after') } })
  if (q.before) out.push({ op: 'binary', fn: '<', left: col('timestamp'), right: { op: 'time', value: resolveInstant(q.before, ctx.now, ctx.timeZone, 'query.before') } })
  return out
}

/** One cell as PostHog serialises it: times in the project's zone, `*` and `person` as objects. */
function cell(c: EventsColumn, i: number, r: Record<string, unknown>, timeZone: string): unknown {
  const time = (v: unknown) => (v instanceof Date ? formatInZone(v, timeZone) : v ?? null)
  if (c.kind === 'star') {
    return {
      uuid: r[`c${i}_uuid`], event: r[`c${i}_event`], properties: parseJson(r[`c${i}_properties`]), timestamp: time(r[`c${i}_timestamp`]),
      distinct_id: r[`c${i}_distinct_id`], elements_chain: r[`c${i}_elements_chain`], created_at: time(r[`c${i}_created_at`]),
    }
  }
  if (c.kind === 'person') return { uuid: r[`c${i}_id`] ?? null, properties: parseJson(r[`c${i}_properties`]), distinct_id: r[`c${i}_distinct_id`], created_at: null }
  const v = r[`c${i}`]
  return c.text === 'properties' ? parseJson(v) : time(v)
}
