import type { SequenceCall } from '../event-sql/event-dialect.ts'

const q = (name: string): string => `\`${name}\``

/**
 * A sequence (`SequenceStep`) without window functions (ClickHouse 18.16 has none): each partition's
 * rows become one sorted array of tuples (`groupArray`, `arraySort`), every column and step an
 * array computed from those (steps read earlier ones element by element through `arrayMap` lambdas
 * of several arrays), and `ARRAY JOIN` turns the arrays back into rows. One sort per partition,
 * whatever the number of steps. Partition aggregates are computed once (`arrayReduce`) and
 * repeated with `arrayResize`, not captured in a lambda (a captured array is copied per element).
 * A `filter` step replaces every array still read by its elements where the condition holds
 * (`arrayFilter`), so the steps after it, and the rows joined out, are the kept ones. Steps nothing
 * reads are left out, and only the columns the reader reads are joined out.
 */
export function clickHouseSequenceSql(call: SequenceCall): string {
  const keys = call.partitionBy
  const output = (call.output ?? [...call.columns, ...call.steps.map((st) => st.alias)]).filter((c) => !keys.includes(c))
  // What is read after each step (the reader's columns, later steps' arguments), from the last step back.
  const readAfter: Array<Set<string>> = []
  let read = new Set(output)
  for (let i = call.steps.length - 1; i >= 0; i--) {
    readAfter[i] = read
    const step = call.steps[i]!
    // A max_before step reads the order too (its peer groups are rows of the same order key).
    if (step.fn === 'filter' || read.has(step.alias)) read = new Set([...read, ...(step.arg?.refs ?? []), ...(step.fn === 'max_before' ? call.orderBy : [])])
  }
  const values = call.columns.filter((c) => !keys.includes(c) && (read.has(c) || call.orderBy.includes(c)))
  const at = (name: string): number => {
    const i = values.indexOf(name)
    if (i < 0) throw new Error(`sequence order column "${name}" is not a column of the rows`)
    return i + 1
  }
  const sortKey = call.orderBy.length === 1 ? `x.${at(call.orderBy[0]!)}` : `tuple(${call.orderBy.map((o) => `x.${at(o)}`).join(', ')})`
  const rows = q('__rows')
  // Each column's current array (a filter makes new ones), and an array of the current length.
  const current = new Map<string, string>(values.filter((v) => read.has(v)).map((v) => [v, q(`__a_${v}`)]))
  let length = rows
  const inner: string[] = [
    ...keys.map(q),
    `arraySort(x -> ${sortKey}, groupArray(tuple(${values.map(q).join(', ')}))) AS ${rows}`,
    ...[...current].map(([v, a]) => `arrayMap(x -> x.${values.indexOf(v) + 1}, ${rows}) AS ${a}`),
  ]
  const arr = (name: string): string => {
    const a = current.get(name)
    if (!a) throw new Error(`sequence step reads "${name}", not a column before it`)
    return a
  }
  // The step's argument for each element: a lambda over the arrays it reads.
  // (A partition key, one value per partition, is repeated into an array: a lambda that captured it
  // would read it only inside the lambda, which 18.16 prunes from the subquery a nested level reads.)
  const array = (name: string) => (keys.includes(name) ? `arrayResize([${q(name)}], length(${length}), ${q(name)})` : arr(name))
  const each = (arg: NonNullable<SequenceCall['steps'][number]['arg']>, wrap: (sql: string) => string): string => {
    const sql = wrap(arg.sql((name) => q(`__v_${name}`)))
    if (arg.refs.length === 0) return `arrayMap(x -> ${sql}, ${length})`
    return `arrayMap((${arg.refs.map((r) => q(`__v_${r}`)).join(', ')}) -> ${sql}, ${arg.refs.map(array).join(', ')})`
  }
  const need = (step: SequenceCall['steps'][number]) => {
    if (!step.arg) throw new Error(`sequence step ${step.fn} needs an argument`)
    return step.arg
  }
  const repeat = (scalar: string): string => `arrayResize([${scalar}], length(${length}), ${scalar})`
  let filters = 0
  // A `max_before` step reading another step starts a SELECT of its own over the one before (`*`):
  // 18.16 expands aliases into the expressions that read them, and a chain of them (a funnel's
  // levels) would grow exponentially in one SELECT.
  const levels: string[][] = [inner]
  let peerGroups = false
  const stepAliases = new Set<string>()
  for (const [i, step] of call.steps.entries()) {
    // A prune keeps its rows here: dropping them is an arrayFilter of every array, for steps that
    // cost no sort on the arrays.
    if (step.fn === 'prune' || (step.fn !== 'filter' && !readAfter[i]!.has(step.alias))) continue
    if (step.fn === 'max_before' && step.arg?.refs.some((r) => stepAliases.has(r))) levels.push([])
    stepAliases.add(step.alias)
    const items = levels[levels.length - 1]!
    let sql: string
    switch (step.fn) {
      case 'row_number':
        sql = `arrayMap(i -> toInt64(i), arrayEnumerate(${length}))`
        break
      case 'lag':
      case 'lead': {
        const values = each(need(step), (s) => `toNullable(${s})`)
        if (step.offset === 1) {
          sql = step.fn === 'lag' ? `arrayPushFront(arrayPopBack(${values}), NULL)` : `arrayPushBack(arrayPopFront(${values}), NULL)`
          break
        }
        // Further away: `offset` NULLs (an empty slice of the values resized) before the values, cut
        // to the partition's length; or the values from offset + 1 on, padded with NULLs to it.
        sql = step.fn === 'lag'
          ? `arrayResize(arrayConcat(arrayResize(arraySlice(${values}, 1, 0), ${step.offset}), ${values}), length(${length}))`
          : `arrayResize(arraySlice(${values}, ${step.offset + 1}), length(${length}))`
        break
      }
      case 'running_sum':
        sql = `arrayCumSum(${each(need(step), (s) => `toInt64(ifNull(${s}, 0))`)})`
        break
      case 'partition_min':
      case 'partition_max':
        sql = repeat(`arrayReduce('${step.fn === 'partition_min' ? 'min' : 'max'}', ${each(need(step), (s) => `toNullable(${s})`)})`)
        break
      case 'partition_count':
        sql = repeat(`toInt64(length(${length}))`)
        break
      case 'run_position': {
        if (step.upTo === undefined) throw new Error('sequence step run_position needs upTo')
        // Runs numbered by the rows before that ended one; a row's position is its count in its run.
        const ended = each(need(step), (s) => `toInt64(ifNull(${s}, 0) != 0)`)
        sql = `arrayMap(p -> if(p <= ${step.upTo}, toNullable(toInt64(p)), NULL), arrayEnumerateUniq(arrayCumSum(arrayPushFront(arrayPopBack(${ended}), toInt64(0)))))`
        break
      }
      case 'max_before': {
        // The peer groups depend on the order only: computed once, with the first max_before step.
        const groups = peerGroupArrays(call.orderBy.map(arr))
        if (!peerGroups) items.push(...groups.items)
        peerGroups = true
        const parts = maxBeforeArrays(each(need(step), (s) => s), groups.starts, (name) => q(`__m_${step.alias}_${name}`))
        items.push(...parts.items)
        sql = parts.sql
        break
      }
      case 'map':
        sql = each(need(step), (s) => s)
        break
      case 'filter': {
        const mask = q(`__m${filters}`)
        items.push(`${each(need(step), (s) => `toUInt8(ifNull(${s}, 0))`)} AS ${mask}`)
        for (const [name, a] of current) {
          if (!readAfter[i]!.has(name)) {
            current.delete(name)
            continue
          }
          const kept = q(`__f${filters}_${name}`)
          items.push(`arrayFilter((x, m) -> m, ${a}, ${mask}) AS ${kept}`)
          current.set(name, kept)
        }
        length = current.values().next().value ?? mask
        filters++
        if (!readAfter[i]!.has(step.alias)) continue
        sql = `arrayMap(x -> toUInt8(1), ${length})`
        break
      }
    }
    const name = q(`__a_${step.alias}`)
    items.push(`${sql} AS ${name}`)
    current.set(step.alias, name)
  }
  const joined = output
  const group = keys.length ? ` GROUP BY ${keys.map(q).join(', ')}` : ''
  const grouped = levels.slice(1).reduce((sql, items) => `SELECT *, ${items.join(', ')} FROM (${sql})`, `SELECT ${inner.join(', ')} FROM ${call.from} AS t${group}`)
  return `(SELECT ${[...keys, ...joined].map(q).join(', ')} FROM (${grouped}) ARRAY JOIN ${joined.map((c) => `${arr(c)} AS ${q(c)}`).join(', ')})`
}

/** Stands for NULL in `maxBeforeArray`'s arithmetic: below every argument (BIGINTs within +-2^61). */
const NONE = '-4611686018427387904'
/** Added where a running maximum restarts: `arrayCumSumNonNegative` then starts again from 0. */
const RESTART = '-9223372036854775807'

/** Reversed (as `maxBeforeArrays` reads them): where a peer group starts, the order key differing from the one before. */
function peerGroupArrays(keys: readonly string[]): { items: string[]; starts: string } {
  const shift = (a: string, first: string) => `arrayPushFront(arrayPopBack(${a}), ${first})`
  const key = keys.length === 1 ? keys[0]! : `arrayMap((${keys.map((_, i) => `k${i}`).join(', ')}) -> tuple(${keys.map((_, i) => `k${i}`).join(', ')}), ${keys.join(', ')})`
  const [rk, starts] = [q('__m_rk'), q('__m_starts')]
  return {
    items: [`arrayReverse(${key}) AS ${rk}`, `arrayMap((k, p, i) -> i = 1 OR k != p, ${rk}, ${shift(rk, `${rk}[1]`)}, arrayEnumerate(${rk})) AS ${starts}`],
    starts,
  }
}

/**
 * `max_before` over a partition's sorted arrays in linear time (a framed `arrayReduce` per element
 * is quadratic, and a lambda that captures an array copies it per element). A running maximum
 * M(i) = max(M(i-1), v(i)) is v(i) + d(i) with d(i) = max(0, d(i-1) + v(i-1) - v(i)), which is
 * `arrayCumSumNonNegative` of the differences (the first element's difference 0). The rows before
 * the row give the maximum up to the row before (shifted by one); its later peers, the same running
 * maximum over the reversed arrays restarted at each peer group (`starts`, reversed) and shifted
 * by one within the group. The intermediate arrays are `items` of the SELECT (`name` gives their
 * aliases), each computed once.
 */
function maxBeforeArrays(values: string, starts: string, name: (part: string) => string): { items: string[]; sql: string } {
  const shift = (a: string, first: string) => `arrayPushFront(arrayPopBack(${a}), ${first})`
  const [v, rv] = ['v', 'rv'].map(name) as [string, string]
  const items = [`arrayMap(x -> ifNull(toInt64(x), ${NONE}), ${values}) AS ${v}`, `arrayReverse(${v}) AS ${rv}`]
  const before = shift(`arrayMap((x, d) -> x + d, ${v}, arrayCumSumNonNegative(arrayMap((p, x) -> p - x, ${shift(v, `${v}[1]`)}, ${v})))`, NONE)
  const running = `arrayMap((x, d) -> x + d, ${rv}, arrayCumSumNonNegative(arrayMap((s, p, x) -> if(s, ${RESTART}, p - x), ${starts}, ${shift(rv, '0')}, ${rv})))`
  const peers = `arrayReverse(arrayMap((s, m) -> if(s, ${NONE}, m), ${starts}, ${shift(running, NONE)}))`
  return { items, sql: `arrayMap((b, p) -> if(greatest(b, p) = ${NONE}, NULL, greatest(b, p)), ${before}, ${peers})` }
}
