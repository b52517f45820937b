import type { OffsetSegment } from '../../domain/query/bucket-keys.ts'
import { AppError } from '../../shared/errors.ts'
import type { ElementField, ElementRef, EventDialect, PropertySource, ValueSource } from '../event-sql/event-dialect.ts'
import { ATTRIBUTE_PATTERN, POSITION_PATTERN, SPLIT_CHAIN_PATTERN, SPLIT_CLASS_PATTERN } from '../../domain/actions/parse-elements-chain.ts'
import type { SqlParams } from '../event-sql/sql-params.ts'
import type { ValueSqlDialect } from '../sql/value-sql-dialect.ts'
import { materializedColumn, nonStringBit } from '../duckdb/materialized-properties.ts'
import { toDuckDbRegex } from '../duckdb/duckdb-event-dialect.ts'
import { currentOverridesSql } from './clickhouse-person-override-store.ts'
import { numberLiteral, stringLiteral } from './clickhouse-literals.ts'
import { clickHouseWindowRelation } from './clickhouse-window-arrays.ts'
import { clickHouseSequenceSql } from './clickhouse-sequence-sql.ts'

const EVENT_COLUMNS = new Set(['uuid', 'event', 'distinct_id', 'timestamp', 'created_at', 'elements_chain', 'properties', 'person_properties', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4'])
const quantileOk = (q: number | undefined): q is number => typeof q === 'number' && q > 0 && q < 1

/**
 * ClickHouse's event dialect, written to the subset of SQL that runs on 18.16 (Debian's package, CI)
 * and on current releases (docs/clickhouse.md):
 * - no bound parameters: `params.add` renders escaped literals (clickhouse-literals.ts);
 * - GROUP BY / ORDER BY by alias (18.16 reads `ORDER BY 1` as the constant 1, silently);
 * - shared sub-plans inlined (no CTEs on 18.16), joins `ALL ... USING` with `join_use_nulls = 1`
 *   (set by the engine), spreading by `ARRAY JOIN range(n)`;
 * - properties from the top-level key/value arrays the event store fills (exact keys at the top
 *   level; visitParam* would match a key at any depth), or from the materialized columns;
 * - `timestamp` is the DateTime (seconds); bucketing reads the exact `timestamp_ms`.
 * - the elements chain parsed with the domain's RE2 patterns into tuples (extractAll gives a
 *   pattern's first group only: the attribute values come from the same pattern with the key's group
 *   made non-capturing, so the i-th match of both is the same span).
 * - window functions (none on 18.16) as per-partition array programs (clickhouse-window-arrays.ts).
 */
export const clickHouseEventDialect: EventDialect = {
  name: 'clickhouse',
  createParams: createLiteralParams,
  literal(value, params) {
    return params.add(value)
  },
  double: (value) => `toFloat64(${numberLiteral(value)})`,
  time: (iso) => {
    const ms = Date.parse(iso)
    if (Number.isNaN(ms)) throw new AppError('validation_error', `Not a date: ${iso}.`, 'query')
    // `timestamp` is whole seconds here: a bound with a fraction is rounded up, which keeps the domain's
    // exclusive upper bounds (`timestamp < to`, `to` = a day's 00:00:00.000 plus 1 ms for a date-only
    // date_to) holding the events of that second, as DuckDB's exact comparison does.
    return `toDateTime(${Math.min(4_294_967_295, Math.max(0, Math.ceil(ms / 1000)))}, 'UTC')`
  },
  constant: (text) => stringLiteral(text),
  bool: (value) => (value ? '1' : '0'),
  identifier: (name) => `\`${name}\``,
  cast: (expr, type) => `${CASTS[type]}(${expr})`,
  tryDouble: (text) => `toFloat64OrNull(toString(${text}))`,
  isNaN: (value) => `isNaN(${value})`,
  eventsFrom(projectId, _params, needs) {
    const project = `project_id = ${Math.trunc(projectId)}`
    // The chain is parsed once per row of the project, in the subquery, only when a filter reads elements.
    const els = needs.elements ? `, ${ELEMENTS_SQL} AS __els` : ''
    if (!needs.person) return `(SELECT *${els} FROM events WHERE ${project}) AS e WHERE 1`
    const overrides = `(SELECT old_person_id AS person_id, override_person_id FROM (${currentOverridesSql(projectId)}))`
    return `(SELECT *${els} FROM events ANY LEFT JOIN ${overrides} USING person_id WHERE ${project}) AS e WHERE 1`
  },
  sessionPartialsFrom(projectId) {
    return `sessions WHERE project_id = ${Math.trunc(projectId)}`
  },
  eventColumn(name) {
    if (!EVENT_COLUMNS.has(name)) throw new AppError('validation_error', `Unknown column "${name}".`, 'query')
    return `e.${name}`
  },
  personId: 'coalesce(e.override_person_id, e.person_id)',
  sharedPlans: 'inline',
  cte: () => {
    throw new Error('ClickHouse 18.16 has no CTEs: shared plans are inlined')
  },
  join: (left, right, using, keepLeft) => `${left} AS l ${keepLeft ? 'ALL LEFT JOIN' : 'ALL INNER JOIN'} ${right} AS r USING (${using.join(', ')})`,
  // In a subquery of its own: 18.16 refuses `SELECT k AS k` beside `ARRAY JOIN ... AS k` (duplicate alias).
  spread: (from, times) => `(SELECT *, k FROM ${from} ARRAY JOIN range(${Math.trunc(times)}) AS k) AS s`,
  selectedRef: (_position, alias) => alias,
  window() {
    throw new Error('ClickHouse 18.16 has no window functions: the compiler asks windowRelation instead')
  },
  windowRelation: clickHouseWindowRelation,
  aliasesShadowColumns: true,
  aggregate(fn, arg, opts) {
    const a = arg ?? ''
    switch (fn) {
      case 'count':
        return opts.distinct && arg ? `uniqExact(${a})` : `count(${a})`
      case 'uniq':
        return `uniqExact(${a})`
      case 'quantile':
        if (!quantileOk(opts.quantile)) throw new Error('quantile between 0 and 1')
        return `quantile(${opts.quantile})(${a})`
      case 'any':
        return `any(${a})`
      case 'arg_min':
      case 'arg_max':
        if (!arg || !opts.by) throw new Error(`${fn} needs an argument and a key`)
        return `${fn === 'arg_min' ? 'argMin' : 'argMax'}(${arg}, ${opts.by})`
      case 'list':
        if (opts.distinct) return `groupUniqArray(${a})`
        return opts.by !== undefined ? `arrayMap(x -> x.1, arraySort(x -> x.2, groupArray((${a}, ${opts.by}))))` : `groupArray(${a})`
      case 'bit_or':
        return `groupBitOr(${a})`
      case 'mode':
        // topK(1) of the non-NULL values; a group of NULLs only gives NULL, as DuckDB's mode.
        return `if(countIf(isNotNull(${a})) = 0, NULL, topKIf(1)(assumeNotNull(${a}), isNotNull(${a}))[1])`
      default:
        return opts.distinct ? `${fn}Distinct(${a})` : `${fn}(${a})`
    }
  },
  property(source, key) {
    const column = source === 'event' ? materializedColumn(key, 'e') : undefined
    return column ?? arrays(source).value(key)
  },
  properties: (source) => (source === 'event' ? 'e.properties' : `coalesce(e.person_properties, '{}')`),
  propertyList(keys) {
    return `[${keys.map((k) => `toNullable(${materializedColumn(k, 'e') ?? arrays('event').value(k)})`).join(', ')}]`
  },
  propertyValue(source, key): ValueSource {
    const a = arrays(source)
    return { present: a.present(key), text: `coalesce(${a.value(key)}, 'null')` }
  },
  stringProperty(key) {
    const column = materializedColumn(key, 'e')
    if (!column || nonStringBit(key) < 0) return arrays('event').value(key)
    const bit = 2 ** nonStringBit(key)
    return `if(bitAnd(e.mat_nonstring, ${bit}) = 0, ${column}, NULL)`
  },
  bucket(interval, offsets, ts) {
    const ms = this.epochMs(ts)
    const off = offsetSql(ms, offsets)
    const local = off === '0' ? ms : `(${ms} + ${off})`
    const day = `intDiv(${local}, 86400000)`
    switch (interval) {
      case 'hour':
        return off === '0' ? `(intDiv(${ms}, 3600000) * 3600000)` : `(intDiv(${local}, 3600000) * 3600000 - ${off})`
      case 'day':
        return `(${day} * 86400000)`
      case 'week':
        return `((${day} - ((${day} + 4) % 7)) * 86400000)`
      case 'month':
        return `(toInt64(toUnixTimestamp(toDateTime(toStartOfMonth(toDateTime(intDiv(${local}, 1000), 'UTC')), 'UTC'))) * 1000)`
    }
  },
  shift(interval, n, key) {
    if (interval === 'month') return `(toInt64(toUnixTimestamp(addMonths(toDateTime(intDiv(${key}, 1000), 'UTC'), toInt32(${n})))) * 1000)`
    const step = { hour: 3_600_000, day: 86_400_000, week: 604_800_000 }[interval]
    return `(${key} + (${n}) * ${step})`
  },
  // `timestamp` is whole seconds here (see above).
  timeOfMs: (ms) => `toDateTime(intDiv(${ms}, 1000), 'UTC')`,
  epochMs: (ts) => (ts === 'e.timestamp' || ts === 'timestamp' ? 'e.timestamp_ms' : `(toInt64(toUnixTimestamp(${ts})) * 1000)`),
  regexMatch: (text, pattern) => `match(${text}, ${pattern})`,
  // extract() gives the first group ('' when there is no match); a NULL text stays NULL.
  regexExtract: (text, pattern) => `nullIf(extract(${text}, ${pattern}), '')`,
  regexSource: clickHouseRegex,
  asciiLower: (text) => `lower(${text})`,
  lower: (text) => `lowerUTF8(${text})`,
  contains: (text, needle) => `(position(${text}, ${needle}) > 0)`,
  startsWith: (text, prefix) => `startsWith(${text}, ${prefix})`,
  endsWith: (text, suffix) => `endsWith(${text}, ${suffix})`,
  concatWs: (separator, args) =>
    `arrayStringConcat(arrayMap(x -> assumeNotNull(x), arrayFilter(x -> isNotNull(x), [${args.map((a) => `toNullable(toString(${a}))`).join(', ')}])), ${separator})`,
  elements: {
    parse: () => ELEMENTS_SQL,
    any: (condition) => `arrayExists(el_ -> coalesce(${condition(ELEMENT)}, 0), __els)`,
    tokens: (parts) => `arrayStringConcat(arrayMap(el_ -> concat(${parts(ELEMENT).join(', ')}), __els), ',')`,
  },
  bitFlag: (index) => `bitShiftLeft(toUInt64(1), toUInt8(${index}))`,
  bitsShiftRight: (word, by) => `bitShiftRight(toUInt64(${word}), toUInt8(${by}))`,
  bitsAny(word, mask) {
    if (!/^\d{1,20}$/.test(mask)) throw new Error(`bit mask ${mask} is not an unsigned integer`)
    return `(bitAnd(toUInt64(${word}), toUInt64(${mask})) != 0)`
  },
  values: clickHouseValueDialect,
  // --- Paths -------------------------------------------------------------------------------------
  regexReplace: (text, pattern, replacement) => `replaceRegexpAll(${text}, ${pattern}, ${replacement})`,
  sequence: clickHouseSequenceSql,
}

const CASTS = { int32: 'toInt32', int64: 'toInt64', uint64: 'toUInt64', float64: 'toFloat64', text: 'toString' } as const

/**
 * A user's RE2 pattern for ClickHouse's `match`, with the domain's meaning (`compileRegex`):
 * - named groups as `(?P<`;
 * - `.` does not cross a newline: ClickHouse compiles patterns with RE2's `dot_nl` on, so the
 *   pattern is wrapped in `(?-s:...)` (an inline `(?s)` inside it still turns it back on);
 * - a pattern with an inline case flag (`(?i)`) becomes an alternation with a class that matches
 *   nothing: 18.16's `match` first looks for the pattern's required literal text case-sensitively
 *   (`match('HELLO', '(?i)hello')` is 0 there) and takes none from a top-level alternation.
 */
export function clickHouseRegex(source: string): string {
  const re2 = `(?-s:${toDuckDbRegex(source)})`
  return /\(\?[A-Za-z-]*i[A-Za-z-]*[:)]/.test(source) ? `${re2}|[^\\s\\S]` : re2
}

/** Parameters rendered as literals in place (nothing is bound: 18.16 has no query parameters). */
export function createLiteralParams(): SqlParams {
  return {
    values: [],
    add(value) {
      if (typeof value === 'boolean') return value ? '1' : '0'
      if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER ? `toInt64(${value})` : `toFloat64(${numberLiteral(value)})`
      return stringLiteral(value)
    },
  }
}

/** A source's top-level keys (`prop_keys`: values as json_extract_string's text; `prop_null_keys`: JSON null). */
function arrays(source: PropertySource) {
  const p = source === 'event' ? 'e.prop' : 'e.person_prop'
  return {
    present: (key: string) => `(has(${p}_keys, ${stringLiteral(key)}) OR has(${p}_null_keys, ${stringLiteral(key)}))`,
    value: (key: string) => `if(has(${p}_keys, ${stringLiteral(key)}), ${p}_values[indexOf(${p}_keys, ${stringLiteral(key)})], NULL)`,
  }
}

function offsetSql(ms: string, offsets: readonly OffsetSegment[]): string {
  const whole = (n: number) => {
    if (!Number.isSafeInteger(n)) throw new Error(`offset segment ${n} is not an integer`)
    return String(n)
  }
  if (offsets.length === 1) return whole(offsets[0]!.offsetMs)
  const cases = offsets.slice(0, -1).map((o) => `WHEN ${ms} < ${whole(o.until!)} THEN ${whole(o.offsetMs)}`)
  return `(CASE ${cases.join(' ')} ELSE ${whole(offsets[offsets.length - 1]!.offsetMs)} END)`
}

/** The date and version filters' dialect on ClickHouse (literals in place, RE2 `match`, capture groups by replaceRegexpOne). */
function clickHouseValueDialect(params: SqlParams): ValueSqlDialect {
  return {
    bind: (value) => (typeof value === 'number' ? `toFloat64(${numberLiteral(value)})` : params.add(value)),
    matches: (text, pattern) => `match(${text}, ${stringLiteral(pattern)})`,
    let: (expr, body) => body(`(${expr})`),
    groups: (text, pattern, names, body) => body((name) => {
      const at = names.indexOf(name)
      if (at < 0) throw new Error(`no group ${name}`)
      return `replaceRegexpOne(${text}, ${stringLiteral(pattern)}, ${stringLiteral(`\\${at + 1}`)})`
    }),
    toDouble: (text) => `toFloat64OrNull(${text})`,
    isFinite: (value) => `isFinite(${value})`,
    trim: (text, chars) => {
      const cls = chars.replace(/[\\\]^-]/g, '\\$&')
      return `replaceRegexpAll(${text}, ${stringLiteral(`^[${cls}]+|[${cls}]+$`)}, '')`
    },
    trimStart: (text, chars) => `replaceRegexpOne(${text}, ${stringLiteral(`^[${chars.replace(/[\\\]^-]/g, '\\$&')}]+`)}, '')`,
    padStart(text, width, char) {
      if (char.length !== 1) throw new Error('padStart pads with one character')
      // 18.16 has neither lpad nor repeat: the padding is cut from a constant run of the character.
      const w = Math.trunc(width)
      return `concat(substring(${stringLiteral(char.repeat(w))}, 1, toUInt64(greatest(0, ${w} - toInt64(length(${text}))))), ${text})`
    },
    mapParts: (text, part) => `arrayStringConcat(arrayMap(x -> ${part('x')}, arrayFilter(x -> x != '', splitByChar('.', ${text}))))`,
    compareBytes: (left, op, right) => `(${left} ${op === '<>' ? '!=' : op} ${right})`,
  }
}

/** Index (1-based) of each field in an element tuple of ELEMENTS_SQL. */
const FIELD: Record<ElementField, number> = { tag: 1, text: 3, href: 4, attr_id: 5, nth_child: 6, nth_of_type: 7 }

/** Element conditions are lambdas over one tuple of `ELEMENTS_SQL`'s array, named `el_` (`e` is the events alias). */
const ELEMENT: ElementRef = {
  field: (name) => `tupleElement(el_, ${FIELD[name]})`,
  hasClass: (param) => `has(tupleElement(el_, 2), ${param})`,
  attribute: (param) => `if(has(tupleElement(el_, 8), ${param}), tupleElement(el_, 9)[indexOf(tupleElement(el_, 8), ${param})], NULL)`,
}

const lit = stringLiteral
/** The attribute pattern with the key's group non-capturing: extractAll then yields the values. */
const VALUE_PATTERN = ATTRIBUTE_PATTERN.replace('(?s)(.*?)=', '(?s)(?:.*?)=')
const unescapeQuote = (x: string): string => `replaceAll(${x}, '\\\\"', '"')`
/** The last value of `key` in the (reversed) keys/values of an element. */
const lookup = (key: string): string => `if(has(tupleElement(q_, 2), ${lit(key)}), tupleElement(q_, 3)[indexOf(tupleElement(q_, 2), ${lit(key)})], NULL)`
const position = (expr: string): string => `if(match(coalesce(${expr}, ''), ${lit(POSITION_PATTERN)}), toString(toInt64OrZero(replaceRegexpOne(assumeNotNull(${expr}), '^[+]', ''))), NULL)`

/**
 * The `elements_chain` parsed in SQL as the domain's `parseElementsChain` does: an array of tuples
 * (tag, classes, text, href, attr_id, nth_child, nth_of_type, keys, values), keys and values reversed
 * so `indexOf` finds the last value of a key.
 */
const ELEMENTS_SQL = `arrayMap(q_ -> tuple(
    if(tupleElement(q_, 1) = '', NULL, splitByChar('.', tupleElement(q_, 1))[1]),
    if(position(tupleElement(q_, 1), '.') > 0, arrayFilter(c_ -> c_ != '', splitByChar('.', substring(tupleElement(q_, 1), position(tupleElement(q_, 1), '.') + 1))), emptyArrayString()),
    ${lookup('text')}, ${lookup('href')}, ${lookup('attr_id')}, ${position(lookup('nth-child'))}, ${position(lookup('nth-of-type'))},
    tupleElement(q_, 2), tupleElement(q_, 3)),
  arrayMap(p_ -> tuple(tupleElement(p_, 1),
      arrayReverse(arrayMap(k_ -> ${unescapeQuote('k_')}, extractAll(tupleElement(p_, 2), ${lit(ATTRIBUTE_PATTERN)}))),
      arrayReverse(arrayMap(v_ -> ${unescapeQuote('v_')}, extractAll(tupleElement(p_, 2), ${lit(VALUE_PATTERN)})))),
    arrayMap(el_ -> tuple(replaceRegexpOne(el_, ${lit(SPLIT_CLASS_PATTERN)}, '\\\\1'), replaceRegexpOne(el_, ${lit(SPLIT_CLASS_PATTERN)}, '\\\\2')),
      extractAll(elements_chain, ${lit(SPLIT_CHAIN_PATTERN)}))))`
