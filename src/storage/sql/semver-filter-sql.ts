import { toPropertyString } from '../../domain/properties/property-string.ts'
import { caretRange, parseSemver, tildeRange, wildcardRange, type SemVer, type SemverRange } from '../../domain/properties/semver.ts'
import type { ValueSqlDialect } from './value-sql-dialect.ts'
import { lookupTable } from '../../shared/lookup-table.ts'
// FALSE spelt so every engine reads it (ClickHouse 18.16 has no TRUE/FALSE keywords).
const NEVER = '(1 = 0)'

// What JS's String.prototype.trim removes (white space and line terminators); `normalize` in semver.ts trims so.
const JS_WHITE_SPACE = String.fromCodePoint(
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, ...Array.from({ length: 11 }, (_, i) => 0x2000 + i),
  0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff,
)
// `parseSemver`'s grammar after the `v` and white space are gone: one to three numeric parts, then a
// pre-release (numeric identifiers without leading zeros) and build metadata. `[.]` is a literal point.
const PRE_ID = '(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)'
const BUILD_ID = '[0-9A-Za-z-]+'
const SEMVER = `^([0-9]+)(?:[.]([0-9]+))?(?:[.]([0-9]+))?(?:-(${PRE_ID}(?:[.]${PRE_ID})*))?(?:[+](${BUILD_ID}(?:[.]${BUILD_ID})*))?$`
const MAX_SAFE = String(Number.MAX_SAFE_INTEGER)
const CORE_WIDTH = MAX_SAFE.length
const LENGTH_WIDTH = 10

type Comparison = '=' | '<>' | '<' | '<=' | '>' | '>='
const COMPARISONS = lookupTable<Comparison>({
  semver_eq: '=', semver_neq: '<>', semver_gt: '>', semver_gte: '>=', semver_lt: '<', semver_lte: '<=',
})

/**
 * A `semver_*` filter as a SQL condition on a present value's string form `text`, with the domain's
 * semantics (`compileSemver` in match-property.ts, `semver.ts`): the filter's version or range is
 * worked out here in JS and bound; the stored value is parsed in SQL into a sort key whose byte
 * order is `compareSemver`'s order (see {@link semverSortKey}), so every operator is a text
 * comparison. An unparsable stored value is NULL (fails); an unparsable filter is FALSE.
 *
 * Known gap: numeric pre-release or build identifiers above 2^53 compare exactly here, where the
 * domain compares the nearest doubles.
 */
export function semverFilterSql(operator: string, value: unknown, text: string, d: ValueSqlDialect): string {
  const filterText = toPropertyString(value)
  const comparison = COMPARISONS[operator]
  if (comparison !== undefined) {
    const expected = parseSemver(filterText)
    if (expected === null) return NEVER
    return d.compareBytes(semverKeySql(text, d), comparison, d.bind(semverSortKey(expected)))
  }
  const range = operator === 'semver_tilde' ? tildeRange(filterText)
    : operator === 'semver_caret' ? caretRange(filterText)
    : operator === 'semver_wildcard' ? wildcardRange(filterText)
    : null
  return range === null ? NEVER : d.let(semverKeySql(text, d), (key) => rangeSql(key, range, d))
}

/** `isInSemverRange`: within `[lower, upper)`, and a pre-release only beside a pre-release lower bound of its own core. */
function rangeSql(key: string, range: SemverRange, d: ValueSqlDialect): string {
  const lower = semverSortKey(range.lower)
  const parts = [d.compareBytes(key, '>=', d.bind(lower))]
  if (range.upper !== null) parts.push(d.compareBytes(key, '<', d.bind(semverSortKey(range.upper))))
  const released = `substr(${key}, ${3 * CORE_WIDTH + 1}, 1) = '2'`
  if (range.lower.pre.length === 0) parts.push(released)
  else parts.push(`(${released} OR substr(${key}, 1, ${3 * CORE_WIDTH}) = ${d.bind(lower.slice(0, 3 * CORE_WIDTH))})`)
  return `(${parts.join(' AND ')})`
}

/**
 * A version as text whose byte order is `compareSemver`'s: major, minor and patch zero-padded to 16
 * digits (they are safe integers); `2` for a release or `1` and the pre-release identifiers (so a
 * release sorts after its pre-releases); then the build identifiers. An identifier list is its
 * identifiers, each `a` + length + digits when numeric (numbers before words, then by value) or `b` +
 * text + space (by code unit, a prefix first), closed by `!` (a shorter list first).
 */
export function semverSortKey(v: SemVer): string {
  const core = [v.major, v.minor, v.patch].map((n) => String(n).padStart(CORE_WIDTH, '0')).join('')
  const pre = v.pre.length === 0 ? '2' : `1${identifiersKey(v.pre)}!`
  return `${core}${pre}${identifiersKey(v.build)}!`
}

function identifiersKey(ids: readonly (string | number)[]): string {
  return ids.map((id) => {
    const digits = typeof id === 'number' ? numberDigits(id) : /^\d+$/.test(id) ? id.replace(/^0+(?=.)/, '') : undefined
    return digits === undefined ? `b${id} ` : `a${String(digits.length).padStart(LENGTH_WIDTH, '0')}${digits}`
  }).join('')
}

function numberDigits(n: number): string {
  if (Number.isSafeInteger(n)) return String(n)
  return Number.isFinite(n) ? BigInt(n).toString() : '9'.repeat(400)
}

/** `parseSemver(text)` as its {@link semverSortKey} in SQL; NULL when it does not parse. */
export function semverKeySql(text: string, d: ValueSqlDialect): string {
  const stripped = d.let(text, (raw) => `(CASE WHEN substr(${raw}, 1, 1) = 'v' THEN substr(${raw}, 2) ELSE ${raw} END)`)
  return d.let(d.trim(stripped, JS_WHITE_SPACE), (v) =>
    `(CASE WHEN ${d.matches(v, SEMVER)} THEN ${d.groups(v, SEMVER, ['major', 'minor', 'patch', 'pre', 'build'], (g) => {
      const core = ['major', 'minor', 'patch'].map((name) => {
        const n = withoutLeadingZeros(g(name), d)
        return `(CASE WHEN ${isSafe(n, d)} THEN ${d.padStart(n, CORE_WIDTH, '0')} END)`
      })
      const pre = `(CASE WHEN ${g('pre')} = '' THEN '2' ELSE '1' || ${identifiersSql(g('pre'), d)} || '!' END)`
      return `(${core.join(' || ')} || ${pre} || ${identifiersSql(g('build'), d)} || '!')`
    })} END)`)
}

function withoutLeadingZeros(digits: string, d: ValueSqlDialect): string {
  const trimmed = d.trimStart(digits, '0')
  return `(CASE WHEN ${trimmed} = '' THEN '0' ELSE ${trimmed} END)`
}

function isSafe(digits: string, d: ValueSqlDialect): string {
  return `(length(${digits}) < ${CORE_WIDTH} OR (length(${digits}) = ${CORE_WIDTH} AND ${d.compareBytes(digits, '<=', `'${MAX_SAFE}'`)}))`
}

function identifiersSql(ids: string, d: ValueSqlDialect): string {
  const one = (id: string) => d.let(withoutLeadingZeros(id, d), (n) =>
    `(CASE WHEN ${d.matches(id, '^[0-9]+$')} THEN 'a' || ${d.padStart(`CAST(length(${n}) AS TEXT)`, LENGTH_WIDTH, '0')} || ${n} ELSE 'b' || ${id} || ' ' END)`)
  return `(CASE WHEN ${ids} = '' THEN '' ELSE ${d.mapParts(ids, one)} END)`
}
