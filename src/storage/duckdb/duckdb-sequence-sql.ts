import type { SequenceCall } from '../event-sql/event-dialect.ts'

const q = (name: string): string => `"${name}"`

interface Item {
  alias: string
  sql: string
  refs: readonly string[]
  window: boolean
}

/**
 * A sequence (`SequenceStep`) as DuckDB window functions: one subquery level per depth of the steps'
 * dependencies (a window cannot read another window of its own SELECT), every level over the same
 * partition and order, so DuckDB sorts once per level that has a window. A `filter` (or `prune`) is the
 * `WHERE` of the level after every step before it, so the windows of that level and later see its rows only.
 * Each level passes on only the columns read above it (DuckDB carried every column through every
 * sort otherwise), and steps nothing reads are left out.
 */
export function duckDbSequenceSql(call: SequenceCall): string {
  const need = (upTo: number | undefined): number => {
    if (upTo === undefined) throw new Error('sequence step run_position needs upTo')
    return upTo
  }
  const partition = call.partitionBy.length ? `PARTITION BY ${call.partitionBy.map(q).join(', ')}` : ''
  const ordered = `${partition} ORDER BY ${call.orderBy.map(q).join(', ')}`
  const depth = new Map<string, number>(call.columns.map((c) => [c, 0]))
  const levels: Array<{ items: Item[]; where?: { sql: string; refs: readonly string[] } }> = []
  const at = (level: number) => (levels[level - 1] ??= { items: [] })
  // The lowest level a step may take: the level of the last filter (its rows are the filtered ones).
  let floor = 1
  let highest = 0
  for (const step of call.steps) {
    const arg = step.arg?.sql(q) ?? ''
    const refs = step.arg?.refs ?? []
    // A prune drops its rows here (fewer rows through each later sort), as a filter does.
    if (step.fn === 'filter' || step.fn === 'prune') {
      const level = highest + 1
      at(level).where = { sql: arg, refs }
      at(level).items.push({ alias: step.alias, sql: 'TRUE', refs: [], window: false })
      depth.set(step.alias, level)
      floor = highest = level
      continue
    }
    const level = Math.max(floor, 1 + Math.max(0, ...refs.map((r) => depth.get(r) ?? 0)))
    depth.set(step.alias, level)
    highest = Math.max(highest, level)
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
      case 'run_position': {
        // The distance to the nearest row before that ended a run (none before the partition's first).
        const upTo = Array.from({ length: need(step.upTo) }, (_, i) => i + 1)
        const ended = (j: number) => `COALESCE(lag(CASE WHEN ${arg} THEN 1 ELSE 0 END${j === 1 ? '' : `, ${j}`}) OVER (${ordered}), 1) = 1`
        sql = `(CASE ${upTo.map((j) => `WHEN ${ended(j)} THEN ${j}::BIGINT`).join(' ')} ELSE NULL END)`
        break
      }
      case 'map':
        sql = arg
        break
    }
    at(level).items.push({ alias: step.alias, sql, refs, window: step.fn !== 'map' })
  }
  // From the top down: what each level must select (the columns read above it) and read from below.
  let live = new Set([...call.partitionBy, ...(call.output ?? [...call.columns, ...call.steps.map((s) => s.alias)])])
  const selects: string[][] = []
  for (let l = levels.length - 1; l >= 0; l--) {
    const level = levels[l] ?? { items: [] }
    const items = level.items.filter((i) => live.has(i.alias))
    const passed = [...live].filter((n) => !items.some((i) => i.alias === n))
    selects[l] = [...passed.map(q), ...items.map((i) => `${i.sql} AS ${q(i.alias)}`)]
    const below = new Set(passed)
    for (const i of items) {
      i.refs.forEach((r) => below.add(r))
      if (i.window) [...call.partitionBy, ...call.orderBy].forEach((c) => below.add(c))
    }
    level.where?.refs.forEach((r) => below.add(r))
    live = below
  }
  let from = call.from
  for (const [l, level] of levels.entries()) {
    if (!level) continue
    from = `(SELECT ${selects[l]!.join(', ')} FROM ${from} AS t${level.where ? ` WHERE ${level.where.sql}` : ''})`
  }
  return from
}
