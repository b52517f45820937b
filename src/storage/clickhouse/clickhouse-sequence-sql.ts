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
        sql = `arrayPushFront(arrayPopBack(${each(need(step), (s) => `toNullable(${s})`)}), NULL)`
        break
      case 'lead':
        sql = `arrayPushBack(arrayPopFront(${each(need(step), (s) => `toNullable(${s})`)}), NULL)`
        break
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
