import type { OffsetSegment } from '../../domain/query/bucket-keys.ts'
import type { WindowFrame } from '../../domain/query/query-plan.ts'
import { ATTRIBUTE_PATTERN, POSITION_PATTERN, SPLIT_CHAIN_PATTERN, SPLIT_CLASS_PATTERN } from '../../domain/actions/parse-elements-chain.ts'
import { AppError } from '../../shared/errors.ts'
import type { ElementRef, EventDialect, ValueSource } from '../event-sql/event-dialect.ts'
import { createSqlParams, type SqlParams } from '../event-sql/sql-params.ts'
import { duckDbValueDialect } from './duckdb-value-dialect.ts'
import { duckDbSequenceSql } from './duckdb-sequence-sql.ts'
import { jsonPointer, materializedColumn, materializedStringSql } from './materialized-properties.ts'

const EVENT_COLUMNS = new Set(['uuid', 'event', 'distinct_id', 'timestamp', 'created_at', 'elements_chain', 'properties', 'person_properties', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4'])
const quantileOk = (q: number | undefined): q is number => typeof q === 'number' && q > 0 && q < 1

/**
 * DuckDB's event dialect: positional parameters, materialized CTEs, window functions, JSON pointers
 * (`json_extract_string`), zone buckets as integer arithmetic on epoch milliseconds, RE2
 * (`regexp_matches`), lists and structs with lambdas for the elements chain, positional GROUP BY.
 */
export const duckDbEventDialect: EventDialect = {
  name: 'duckdb',
  createParams: createSqlParams,
  literal(value, params) {
    // Other numbers are bound as text: the driver binds an integral JS number as BIGINT and fails past int64 (1e300).
    if (typeof value === 'number') return Number.isSafeInteger(value) ? `${params.add(value)}::BIGINT` : `CAST(${params.add(String(value))} AS DOUBLE)`
    return params.add(value)
  },
  double: (value, params) => `CAST(${params.add(String(value))} AS DOUBLE)`,
  time: (iso, params) => `${params.add(iso)}::TIMESTAMPTZ`,
  constant: literal,
  bool: (value) => (value ? 'TRUE' : 'FALSE'),
  identifier: (name) => `"${name}"`,
  cast: (expr, type) => `CAST(${expr} AS ${SQL_TYPES[type]})`,
  tryDouble: (text) => `TRY_CAST(${text} AS DOUBLE)`,
  isNaN: (value) => `isnan(${value})`,
  eventsFrom(projectId, params, needs) {
    const projectParam = params.add(projectId)
    const person = needs.person ? ` LEFT JOIN person_overrides o ON o.project_id = e.project_id AND o.old_person_id = e.person_id` : ''
    if (!needs.elements) return `events e${person} WHERE e.project_id = ${projectParam}::INTEGER`
    // The chain is parsed once per row of the project, in a subquery, only when a filter reads elements.
    return `(SELECT events.*, ${ELEMENTS_SQL} AS __els FROM events WHERE project_id = ${projectParam}::INTEGER) e${person} WHERE TRUE`
  },
  sessionPartialsFrom(projectId, params) {
    return `sessions WHERE project_id = ${params.add(projectId)}::INTEGER`
  },
  eventColumn(name) {
    if (!EVENT_COLUMNS.has(name)) throw new AppError('validation_error', `Unknown column "${name}".`, 'query')
    return `e.${name}`
  },
  personId: 'COALESCE(o.override_person_id, e.person_id)',
  sharedPlans: 'cte',
  cte: (name, body) => `${name} AS MATERIALIZED (${body})`,
  join: (left, right, using, keepLeft) => `${left} AS l ${keepLeft ? 'LEFT JOIN' : 'JOIN'} ${right} AS r USING (${using.join(', ')})`,
  spread: (from, times) => `${from} CROSS JOIN range(${times}) AS spread(k)`,
  selectedRef: (position) => String(position),
  window(call) {
    const f = call.fn
    const fn = f === 'lag' || f === 'lead' || f === 'row_number' || f === 'dense_rank' ? `${f}(${call.arg ?? ''})` : this.aggregate(f, call.arg, { by: call.by })
    const partition = call.partitionBy.length ? `PARTITION BY ${call.partitionBy.join(', ')}` : ''
    const order = call.orderBy.length ? ` ORDER BY ${call.orderBy.map((o) => `${o.sql}${o.desc ? ' DESC' : ''}`).join(', ')}` : ''
    return `${fn} OVER (${partition}${order}${call.frame ? ` ${frameSql(call.frame)}` : ''})`
  },
  property(source, key, params) {
    // A materialized column holds the same text (`properties` is then not read at all).
    const column = source === 'event' ? materializedColumn(key, 'e') : undefined
    return column ?? jsonSourceText(source === 'event' ? 'e.properties' : 'e.person_properties', key, params)
  },
  properties: (source) => (source === 'event' ? 'e.properties' : `COALESCE(e.person_properties, '{}')`),
  // One parse of the JSON for every key (json_extract_string with a list of paths).
  propertyList: (keys) => `json_extract_string(e.properties, [${keys.map((k) => literal(jsonPointer(k))).join(', ')}])`,
  propertyValue(source, key, params) {
    if (source === 'event') return jsonSource('properties', key, params, materializedColumn(key))
    return jsonSource(`COALESCE(person_properties, '{}')`, key, params)
  },
  stringProperty(key, params) {
    const column = materializedStringSql(key)
    if (column) return column
    const pointer = params.add(jsonPointer(key))
    return `(CASE WHEN json_type(properties, ${pointer}) = 'VARCHAR' THEN json_extract_string(properties, ${pointer}) END)`
  },
  bucket(interval, offsets, ts) {
    // Integer arithmetic on epoch milliseconds: ~8x cheaper per row than ICU's zone-aware date_trunc.
    const ms = `epoch_ms(${ts})`
    const off = offsetSql(ms, offsets)
    const local = off === '0' ? ms : `(${ms} + ${off})`
    const day = `(${local} // 86400000)`
    switch (interval) {
      case 'hour':
        return off === '0' ? `(${ms} // 3600000 * 3600000)` : `(${local} // 3600000 * 3600000 - ${off})`
      case 'day':
        return `(${day} * 86400000)`
      case 'week':
        // Sunday-start weeks: day 0 (1970-01-01) was a Thursday.
        return `((${day} - ((${day} + 4) % 7)) * 86400000)`
      case 'month':
        return `epoch_ms(date_trunc('month', make_timestamp(${local} * 1000)))`
    }
  },
  shift(interval, n, key) {
    if (interval === 'month') return `epoch_ms(make_timestamp(${key} * 1000) + INTERVAL (${n}) MONTH)`
    const step = { hour: 3_600_000, day: 86_400_000, week: 604_800_000 }[interval]
    return `(${key} + (${n}) * ${step})`
  },
  epochMs: (ts) => `epoch_ms(${ts})`,
  timeOfMs: (ms) => `make_timestamptz(${ms} * 1000)`,
  aggregate(fn, arg, opts) {
    const a = arg ?? '*'
    switch (fn) {
      case 'count':
        return `count(${opts.distinct ? 'DISTINCT ' : ''}${a})`
      case 'uniq':
        return `count(DISTINCT ${a})`
      case 'quantile':
        if (!quantileOk(opts.quantile)) throw new Error('quantile between 0 and 1')
        return `quantile_cont(${a}, ${opts.quantile})`
      case 'any':
        return `any_value(${a})`
      case 'arg_min':
      case 'arg_max':
        if (!arg || !opts.by) throw new Error(`${fn} needs an argument and a key`)
        return `${fn}(${arg}, ${opts.by})`
      case 'list':
        return opts.by !== undefined && !opts.distinct ? `list(${a} ORDER BY ${opts.by})` : `list(${opts.distinct ? 'DISTINCT ' : ''}${a})`
      default:
        return `${fn}(${opts.distinct ? 'DISTINCT ' : ''}${a})`
    }
  },
  regexMatch: (text, pattern) => `regexp_matches(${text}, ${pattern})`,
  regexExtract: (text, pattern) => `nullif(regexp_extract(${text}, ${pattern}, 1), '')`,
  regexSource: toDuckDbRegex,
  asciiLower: (text) => `translate(${text}, ${ASCII_LOWER})`,
  lower: (text) => `lower(${text})`,
  contains: (text, needle) => `contains(${text}, ${needle})`,
  startsWith: (text, prefix) => `starts_with(${text}, ${prefix})`,
  endsWith: (text, suffix) => `ends_with(${text}, ${suffix})`,
  concatWs: (separator, args) => `concat_ws(${separator}, ${args.join(', ')})`,
  elements: {
    parse: () => ELEMENTS_SQL,
    any: (condition) => `(len(list_filter(__els, lambda e: COALESCE(${condition(ELEMENT)}, FALSE))) > 0)`,
    tokens: (parts) => `array_to_string(list_transform(__els, lambda e: concat(${parts(ELEMENT).join(', ')})), ',')`,
  },
  bitFlag: (index) => `(1::UBIGINT << CAST(${index} AS INTEGER))`,
  bitsShiftRight: (word, by) => `(CAST(${word} AS UBIGINT) >> CAST(${by} AS INTEGER))`,
  bitsAny(word, mask) {
    if (!/^\d{1,20}$/.test(mask)) throw new Error(`bit mask ${mask} is not an unsigned integer`)
    return `((${word} & ${mask}::UBIGINT) <> 0)`
  },
  values: duckDbValueDialect,
  // --- Paths -------------------------------------------------------------------------------------
  regexReplace: (text, pattern, replacement) => `regexp_replace(${text}, ${pattern}, ${replacement}, 'g')`,
  sequence: duckDbSequenceSql,
}

/** The zone's offset at the instant `ms` (epoch ms SQL): a constant, or a CASE over the DST changes in the span. */
function offsetSql(ms: string, offsets: readonly OffsetSegment[]): string {
  const whole = (n: number) => {
    if (!Number.isSafeInteger(n)) throw new Error(`offset segment ${n} is not an integer`)
    return String(n)
  }
  if (offsets.length === 1) return whole(offsets[0]!.offsetMs)
  const cases = offsets.slice(0, -1).map((o) => `WHEN ${ms} < ${whole(o.until!)} THEN ${whole(o.offsetMs)}`)
  return `(CASE ${cases.join(' ')} ELSE ${whole(offsets[offsets.length - 1]!.offsetMs)} END)`
}

/** A property's text, NULL when absent (breakdowns and math read it; filters use `jsonSource`). */
function jsonSourceText(column: string, key: string, params: SqlParams): string {
  return `json_extract_string(${column}, ${params.add(jsonPointer(key))})`
}

const SQL_TYPES = { int32: 'INTEGER', int64: 'BIGINT', uint64: 'UBIGINT', float64: 'DOUBLE', text: 'VARCHAR' } as const
const ASCII_LOWER = `'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'`

/** A constant of ours (never user text) as a SQL string literal (DuckDB reads backslashes literally). */
function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`
}

/** DuckDB's RE2 predates `(?<name>...)`; the same group written `(?P<name>...)` means the same. */
export function toDuckDbRegex(source: string): string {
  return source.replace(/(^|[^\\])((?:\\\\)*)\(\?<(?=[A-Za-z_])/g, '$1$2(?P<')
}

/**
 * A key of a JSON text column (`properties`, `person_properties`) as a value source. The key is
 * bound as a JSON pointer, on first use only: DuckDB refuses a statement with an unused parameter.
 */
function jsonSource(column: string, key: string, params: SqlParams, materialized?: string): ValueSource {
  let pointer: string | undefined
  const bind = (): string => (pointer ??= params.add(jsonPointer(key)))
  // A materialized column holds json_extract_string's text of the key (NULL when absent or JSON
  // null): only telling those two apart reads the JSON.
  if (materialized) {
    return {
      get present() {
        return `(${materialized} IS NOT NULL OR COALESCE(json_exists(${column}, ${bind()}), FALSE))`
      },
      get text() {
        return `COALESCE(${materialized}, 'null')`
      },
    }
  }
  return {
    get present() {
      return `COALESCE(json_exists(${column}, ${bind()}), FALSE)`
    },
    get text() {
      return `COALESCE(json_extract_string(${column}, ${bind()}), 'null')`
    },
  }
}

/** `ROWS|RANGE BETWEEN ... AND ... [EXCLUDE CURRENT ROW]`; the offsets are whole numbers, never parameters. */
function frameSql(f: WindowFrame): string {
  const end = (v: 'unbounded' | number, side: 'PRECEDING' | 'FOLLOWING'): string => {
    if (v === 'unbounded') return `UNBOUNDED ${side}`
    if (v === 0) return 'CURRENT ROW'
    const n = Math.abs(v)
    if (!Number.isSafeInteger(n)) throw new Error(`window frame offset ${v} is not a whole number`)
    return `${n} ${v < 0 ? 'PRECEDING' : 'FOLLOWING'}`
  }
  const unit = f.unit === 'rows' ? 'ROWS' : 'RANGE'
  return `${unit} BETWEEN ${end(f.start, 'PRECEDING')} AND ${end(f.end, 'FOLLOWING')}${f.excludeCurrent ? ' EXCLUDE CURRENT ROW' : ''}`
}

/** Element conditions are lambdas over one struct of `ELEMENTS_SQL`'s list, named `e`. */
const ELEMENT: ElementRef = {
  field: (name) => `e.${name}`,
  hasClass: (param) => `list_contains(e.classes, ${param})`,
  attribute: (param) => `e.vs[list_position(e.ks, ${param})]`,
}

function lookup(key: string): string {
  return `list_reverse(q.vs)[list_position(list_reverse(q.ks), ${literal(key)})]`
}

function position(expr: string): string {
  return `CASE WHEN regexp_matches(${expr}, ${literal(POSITION_PATTERN)}) THEN CAST(CAST(${expr} AS BIGINT) AS VARCHAR) END`
}

const unescape = (name: string): string => `replace(${name}, '\\"', '"')`

/**
 * The `elements_chain` column parsed in SQL into a list of structs, with the same RE2 patterns the
 * domain's `parseElementsChain` runs: `tag`, `classes`, `text`, `href`, `attr_id`, `nth_child` and
 * `nth_of_type` (positions as canonical integer text), and the attribute keys and values (reversed,
 * so `list_position` finds the last value of a key, as the pure parser keeps it).
 */
const ELEMENTS_SQL = `list_transform(list_transform(list_transform(
    regexp_extract_all(elements_chain, ${literal(SPLIT_CHAIN_PATTERN)}),
    lambda el: struct_pack(tp := regexp_extract(el, ${literal(SPLIT_CLASS_PATTERN)}, 1),
                           ap := regexp_extract(el, ${literal(SPLIT_CLASS_PATTERN)}, 2))),
    lambda p: struct_pack(tp := p.tp,
      ks := list_transform(regexp_extract_all(p.ap, ${literal(ATTRIBUTE_PATTERN)}, 1), lambda k: ${unescape('k')}),
      vs := list_transform(regexp_extract_all(p.ap, ${literal(ATTRIBUTE_PATTERN)}, 2), lambda v: ${unescape('v')}))),
    lambda q: struct_pack(
      tag := CASE WHEN q.tp = '' THEN NULL ELSE split_part(q.tp, '.', 1) END,
      classes := CASE WHEN position('.' IN q.tp) > 0
        THEN list_filter(string_split(substr(q.tp, position('.' IN q.tp) + 1), '.'), lambda c: c <> '')
        ELSE []::VARCHAR[] END,
      text := ${lookup('text')}, href := ${lookup('href')}, attr_id := ${lookup('attr_id')},
      nth_child := ${position(lookup('nth-child'))}, nth_of_type := ${position(lookup('nth-of-type'))},
      ks := list_reverse(q.ks), vs := list_reverse(q.vs)))`
