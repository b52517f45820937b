import { parseFilterDate, resolveFilterDate } from '../../domain/properties/property-date.ts'
import { floorDiv, type ValueSqlDialect } from './value-sql-dialect.ts'
// FALSE spelt so every engine reads it (ClickHouse 18.16 has no TRUE/FALSE keywords).
const NEVER = '(1 = 0)'

// The shapes `parsePropertyDate` (domain/properties/property-date.ts) reads without JS's Date.parse,
// in the same order. `[.]` is a literal point in both RE2 and ARE. Case is spelt out in classes, not
// with an inline `(?i)`: ClickHouse 18.16's `match` looks for the pattern's literal text case-sensitively
// before it runs RE2, so `(?i)inf` never matches `INF` there.
const RUST_F64 = '^[+-]?(?:(?:[0-9]+[.]?[0-9]*|[.][0-9]+)(?:[eE][+-]?[0-9]+)?|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN])$'
const RELATIVE = '^-?([0-9]+)([hdwmy])$'
const RFC3339 = '^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})([.][0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$'
const DATE_ONLY = '^([0-9]{4})-([0-9]{2})-([0-9]{2})$'
const NAIVE = '^([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})([.][0-9]+)?)?$'
const DATE_TIME = ['y', 'mo', 'd', 'h', 'mi', 's', 'f'] as const
const DAY_MS = 86_400_000
const UNIT_MS = { h: 3_600_000, d: DAY_MS, w: 7 * DAY_MS } as const

/**
 * `is_date_before` / `is_date_after` / `is_date_exact` as a SQL condition on a present value's
 * string form `text`, with the domain's semantics (`compileDate` in match-property.ts): the filter
 * value is parsed and resolved here, in JS, at `now` (epoch ms), and bound; the stored value is
 * parsed in SQL as `parsePropertyDate` does (Unix seconds from Rust's f64 grammar, relative dates
 * at the same `now`, RFC 3339, date-only and naive date-times read as UTC, with chrono's calendar
 * checks). NULL or FALSE where the domain answers false. A filter value that is no date is FALSE.
 *
 * Known gap: a stored string of none of those shapes goes, in the domain, to JS's `Date.parse`
 * (V8's lenient legacy parser, in the process's zone for some shapes: "May 6, 2024", "2024/05/06",
 * but also "1.2.3" as 2003-01-02 and " 5" as 2001-05-01); the SQL reads it as no date. PostHog
 * itself (Rust's `dateparser`, ClickHouse's `parseDateTimeBestEffort`) differs from V8 there too.
 */
export function dateFilterSql(operator: string, value: unknown, text: string, d: ValueSqlDialect, now: number): string {
  const date = parseFilterDate(value)
  if (date === null) return NEVER
  const expected = d.bind(resolveFilterDate(date, now))
  const sign = operator === 'is_date_before' ? '<' : operator === 'is_date_after' ? '>' : '='
  return `(${propertyDateSql(text, d, now)} ${sign} ${expected})`
}

/** `parsePropertyDate(text, now)` in SQL: epoch milliseconds as a double, NULL when it is no date. */
export function propertyDateSql(text: string, d: ValueSqlDialect, now: number): string {
  return d.let(text, (t) => {
    const seconds = d.toDouble(t)
    return `(CASE
      WHEN ${d.matches(t, RUST_F64)} THEN (CASE WHEN ${d.isFinite(seconds)} THEN ${seconds} * 1000 END)
      WHEN ${d.matches(t, RELATIVE)} THEN ${relativeSql(t, d, now)}
      WHEN ${d.matches(t, RFC3339)} THEN ${d.groups(t, RFC3339, [...DATE_TIME, 'z'], (g) => `${civilMsSql(g, d, true)} - ${offsetMsSql(g('z'), d)}`)}
      WHEN ${d.matches(t, DATE_ONLY)} THEN ${d.groups(t, DATE_ONLY, ['y', 'mo', 'd'], (g) => civilMsSql(g, d, false))}
      WHEN ${d.matches(t, NAIVE)} THEN ${d.groups(t, NAIVE, DATE_TIME, (g) => civilMsSql(g, d, true))}
    END)`
  })
}

/** `Z`, or `±hh:mm` (unchecked, as the domain's regex leaves it) in milliseconds east of UTC. */
function offsetMsSql(zone: string, d: ValueSqlDialect): string {
  const minutes = `(${d.toDouble(`substr(${zone}, 2, 2)`)} * 60 + ${d.toDouble(`substr(${zone}, 5, 2)`)})`
  return `(CASE WHEN upper(${zone}) = 'Z' THEN 0 WHEN substr(${zone}, 1, 1) = '-' THEN -${minutes} * 60000 ELSE ${minutes} * 60000 END)`
}

/**
 * The domain's `utc()` check and value: years below 100 fail (Date.UTC reads them as 19xx), as do
 * impossible days, hours past 23, minutes or seconds past 59, and a fraction that rounds second 59
 * up to the next minute. The fraction is rounded to the millisecond like Math.round. Each part is
 * read once and named: written out at each use, the calendar arithmetic repeats it dozens of times.
 */
function civilMsSql(g: (name: string) => string, d: ValueSqlDialect, withTime: boolean): string {
  const part = (name: string) => d.toDouble(g(name))
  const optional = (name: string) => (withTime ? `(CASE WHEN ${g(name)} = '' THEN 0 ELSE ${part(name)} END)` : '0')
  const ms = withTime ? `(CASE WHEN ${g('f')} = '' THEN 0 ELSE floor(${d.toDouble(`'0' || ${g('f')}`)} * 1000 + 0.5) END)` : '0'
  const parts = [part('y'), part('mo'), part('d'), withTime ? part('h') : '0', withTime ? part('mi') : '0', optional('s'), ms]
  return letEach(d, parts, ([y, mo, day, h, mi, s, ms]) => {
    const valid = `${y} >= 100 AND ${mo} BETWEEN 1 AND 12 AND ${day} BETWEEN 1 AND ${daysInMonthSql(y!, mo!)}
      AND ${h} <= 23 AND ${mi} <= 59 AND ${s} <= 59 AND NOT (${s} = 59 AND ${ms} = 1000)`
    return `(CASE WHEN ${valid} THEN ${daysFromCivilSql(y!, mo!, day!)} * ${DAY_MS} + ${h} * 3600000 + ${mi} * 60000 + ${s} * 1000 + ${ms} END)`
  })
}

/** `body` over each of `exprs`, each evaluated once per row (nested `let`s). */
function letEach(d: ValueSqlDialect, exprs: readonly string[], body: (values: string[]) => string, named: string[] = []): string {
  if (named.length === exprs.length) return body(named)
  return d.let(exprs[named.length]!, (v) => letEach(d, exprs, body, [...named, v]))
}

/**
 * A relative stored value (`-7d`, `3m`): `now` less the amount, by calendar months for `m` and
 * `y` (`subtractMonths`: the day clamped to the month's last). Amounts of 10,000 and more are no date.
 */
function relativeSql(t: string, d: ValueSqlDialect, now: number): string {
  return d.groups(t, RELATIVE, ['n', 'unit'], (g) => d.let(d.toDouble(g('n')), (n) => {
    let nowSql: string | undefined
    const at = () => (nowSql ??= d.bind(now))
    return `(CASE WHEN length(${d.trimStart(g('n'), '0')}) > 4 THEN NULL
      WHEN ${g('unit')} = 'h' THEN ${at()} - ${n} * ${UNIT_MS.h}
      WHEN ${g('unit')} = 'd' THEN ${at()} - ${n} * ${UNIT_MS.d}
      WHEN ${g('unit')} = 'w' THEN ${at()} - ${n} * ${UNIT_MS.w}
      WHEN ${g('unit')} = 'm' THEN ${monthsBeforeSql(n, now, d)}
      ELSE ${monthsBeforeSql(`${n} * 12`, now, d)} END)`
  }))
}

/** `subtractMonths(now, months)` of the domain, with Date.UTC's reading of years 0..99 as 19xx. */
function monthsBeforeSql(months: string, now: number, d: ValueSqlDialect): string {
  const at = new Date(now)
  const timeOfDay = now - Math.floor(now / DAY_MS) * DAY_MS
  const total = `(${d.bind(at.getUTCFullYear() * 12 + at.getUTCMonth())} - ${months})`
  return d.let(floorDiv(total, 12), (rawYear) => {
    const month = `(${total} - ${rawYear} * 12 + 1)`
    return d.let(`(CASE WHEN ${rawYear} BETWEEN 0 AND 99 THEN ${rawYear} + 1900 ELSE ${rawYear} END)`, (year) => {
      const day = `least(${d.bind(at.getUTCDate())}, ${daysInMonthSql(year, month)})`
      return `(${daysFromCivilSql(year, month, day)} * ${DAY_MS} + ${d.bind(timeOfDay)})`
    })
  })
}

function isLeapSql(y: string): string {
  const divides = (n: number) => `(${y}) - ${floorDiv(y, n)} * ${n} = 0`
  return `((${divides(4)} AND NOT ${divides(100)}) OR ${divides(400)})`
}

function daysInMonthSql(y: string, m: string): string {
  return `(CASE WHEN ${m} IN (4, 6, 9, 11) THEN 30 WHEN ${m} = 2 THEN (CASE WHEN ${isLeapSql(y)} THEN 29 ELSE 28 END) ELSE 31 END)`
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`), on doubles. */
function daysFromCivilSql(y: string, m: string, day: string): string {
  const yy = `((${y}) - (CASE WHEN ${m} <= 2 THEN 1 ELSE 0 END))`
  const era = floorDiv(yy, 400)
  const yoe = `(${yy} - ${era} * 400)`
  const mp = `((${m}) + 9 - 12 * ${floorDiv(`(${m}) + 9`, 12)})`
  const doy = `(${floorDiv(`153 * ${mp} + 2`, 5)} + (${day}) - 1)`
  const doe = `(${yoe} * 365 + ${floorDiv(yoe, 4)} - ${floorDiv(yoe, 100)} + ${doy})`
  return `(${era} * 146097 + ${doe} - 719468)`
}

