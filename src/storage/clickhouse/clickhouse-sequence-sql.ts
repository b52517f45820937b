import type { SequenceCall } from '../event-sql/event-dialect.ts'

const q = (name: string): string => `\`${name}\``
const arr = (name: string): string => q(`__a_${name}`)

/**
 * A sequence (`SequenceStep`) without window functions (ClickHouse 18.16 has none): each partition's
 * rows become one sorted array of tuples (`groupArray`, `arraySort`), every column and step an
 * array computed from those (steps read earlier ones element by element through `arrayMap` lambdas
 * of several arrays), and `ARRAY JOIN` turns the arrays back into rows. One sort per partition,
 * whatever the number of steps. Partition aggregates are computed once (`arrayReduce`) and
 * repeated with `arrayResize`, not captured in a lambda (a captured array is copied per element).
 */
export function clickHouseSequenceSql(call: SequenceCall): string {
  const keys = call.partitionBy
  const values = call.columns.filter((c) => !keys.includes(c))
  const at = (name: string): number => {
    const i = values.indexOf(name)
    if (i < 0) throw new Error(`sequence order column "${name}" is not a column of the rows`)
    return i + 1
  }
  const sortKey = call.orderBy.length === 1 ? `x.${at(call.orderBy[0]!)}` : `tuple(${call.orderBy.map((o) => `x.${at(o)}`).join(', ')})`
  const rows = q('__rows')
  const inner: string[] = [
    ...keys.map(q),
    `arraySort(x -> ${sortKey}, groupArray(tuple(${values.map(q).join(', ')}))) AS ${rows}`,
    ...values.map((v, i) => `arrayMap(x -> x.${i + 1}, ${rows}) AS ${arr(v)}`),
  ]
  // The step's argument for each element: a lambda over the arrays it reads.
  const each = (arg: NonNullable<SequenceCall['steps'][number]['arg']>, wrap: (sql: string) => string): string => {
    const sql = wrap(arg.sql((name) => q(`__v_${name}`)))
    if (arg.refs.length === 0) return `arrayMap(x -> ${sql}, ${rows})`
    return `arrayMap((${arg.refs.map((r) => q(`__v_${r}`)).join(', ')}) -> ${sql}, ${arg.refs.map(arr).join(', ')})`
  }
  const need = (step: SequenceCall['steps'][number]) => {
    if (!step.arg) throw new Error(`sequence step ${step.fn} needs an argument`)
    return step.arg
  }
  const repeat = (scalar: string): string => `arrayResize([${scalar}], length(${rows}), ${scalar})`
  for (const step of call.steps) {
    let sql: string
    switch (step.fn) {
      case 'row_number':
        sql = `arrayMap(i -> toInt64(i), arrayEnumerate(${rows}))`
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
          ? `arrayResize(arrayConcat(arrayResize(arraySlice(${values}, 1, 0), ${step.offset}), ${values}), length(${rows}))`
          : `arrayResize(arraySlice(${values}, ${step.offset + 1}), length(${rows}))`
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
        sql = repeat(`toInt64(length(${rows}))`)
        break
    }
    inner.push(`${sql} AS ${arr(step.alias)}`)
  }
  const joined = [...values, ...call.steps.map((s) => s.alias)]
  const group = keys.length ? ` GROUP BY ${keys.map(q).join(', ')}` : ''
  return (
    `(SELECT ${[...keys, ...joined].map(q).join(', ')} FROM (SELECT ${inner.join(', ')} FROM ${call.from} AS t${group})` +
    ` ARRAY JOIN ${joined.map((c) => `${arr(c)} AS ${q(c)}`).join(', ')})`
  )
}
