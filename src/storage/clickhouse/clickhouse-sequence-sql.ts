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
    if (step.fn === 'filter' || read.has(step.alias)) read = new Set([...read, ...(step.arg?.refs ?? [])])
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
  const each = (arg: NonNullable<SequenceCall['steps'][number]['arg']>, wrap: (sql: string) => string): string => {
    const sql = wrap(arg.sql((name) => q(`__v_${name}`)))
    if (arg.refs.length === 0) return `arrayMap(x -> ${sql}, ${length})`
    return `arrayMap((${arg.refs.map((r) => q(`__v_${r}`)).join(', ')}) -> ${sql}, ${arg.refs.map(arr).join(', ')})`
  }
  const need = (step: SequenceCall['steps'][number]) => {
    if (!step.arg) throw new Error(`sequence step ${step.fn} needs an argument`)
    return step.arg
  }
  const repeat = (scalar: string): string => `arrayResize([${scalar}], length(${length}), ${scalar})`
  let filters = 0
  for (const [i, step] of call.steps.entries()) {
    if (step.fn !== 'filter' && !readAfter[i]!.has(step.alias)) continue
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
      case 'map':
        sql = each(need(step), (s) => s)
        break
      case 'filter': {
        const mask = q(`__m${filters}`)
        inner.push(`${each(need(step), (s) => `toUInt8(ifNull(${s}, 0))`)} AS ${mask}`)
        for (const [name, a] of current) {
          if (!readAfter[i]!.has(name)) {
            current.delete(name)
            continue
          }
          const kept = q(`__f${filters}_${name}`)
          inner.push(`arrayFilter((x, m) -> m, ${a}, ${mask}) AS ${kept}`)
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
    inner.push(`${sql} AS ${name}`)
    current.set(step.alias, name)
  }
  const joined = output
  const group = keys.length ? ` GROUP BY ${keys.map(q).join(', ')}` : ''
  return (
    `(SELECT ${[...keys, ...joined].map(q).join(', ')} FROM (SELECT ${inner.join(', ')} FROM ${call.from} AS t${group})` +
    ` ARRAY JOIN ${joined.map((c) => `${arr(c)} AS ${q(c)}`).join(', ')})`
  )
}
