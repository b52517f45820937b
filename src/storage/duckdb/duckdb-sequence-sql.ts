import type { SequenceCall } from '../event-sql/event-dialect.ts'

const q = (name: string): string => `"${name}"`

/**
 * A sequence (`SequenceStep`) as DuckDB window functions: one subquery level per depth of the steps'
 * dependencies (a window cannot read another window of its own SELECT), every level over the same
 * partition and order, so DuckDB sorts once per level.
 */
export function duckDbSequenceSql(call: SequenceCall): string {
  const partition = call.partitionBy.length ? `PARTITION BY ${call.partitionBy.map(q).join(', ')}` : ''
  const ordered = `${partition} ORDER BY ${call.orderBy.map(q).join(', ')}`
  const depth = new Map<string, number>(call.columns.map((c) => [c, 0]))
  const levels: string[][] = []
  for (const step of call.steps) {
    const level = 1 + Math.max(0, ...(step.arg?.refs ?? []).map((r) => depth.get(r) ?? 0))
    depth.set(step.alias, level)
    const arg = step.arg?.sql(q) ?? ''
    let sql: string
    switch (step.fn) {
      case 'row_number':
        sql = `row_number() OVER (${ordered})`
        break
      case 'lag':
      case 'lead':
        sql = `${step.fn}(${arg}${step.offset === 1 ? '' : `, ${step.offset}`}) OVER (${ordered})`
        break
      case 'running_sum':
        sql = `CAST(sum(${arg}) OVER (${ordered} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS BIGINT)`
        break
      case 'partition_min':
      case 'partition_max':
        sql = `${step.fn === 'partition_min' ? 'min' : 'max'}(${arg}) OVER (${partition})`
        break
      case 'partition_count':
        sql = `count(*) OVER (${partition})`
        break
      case 'max_before':
        sql = `max(${arg}) OVER (${ordered} RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE CURRENT ROW)`
        break
    }
    ;(levels[level - 1] ??= []).push(`${sql} AS ${q(step.alias)}`)
  }
  let from = call.from
  for (const items of levels) if (items?.length) from = `(SELECT *, ${items.join(', ')} FROM ${from} AS t)`
  return from
}
