import { cleanText } from '../../domain/events/index.ts'
import { compileRegex } from '../../domain/properties/compile-regex.ts'
import { parseFilterDate, parseRustFloat } from '../../domain/properties/property-date.ts'
import { assertNever, isPropertyOperator, PROPERTY_OPERATORS, type OperatorValue } from '../../domain/properties/property-operators.ts'
import { validationError } from '../../shared/errors.ts'
import type { EventPropertyFilter } from './event-read-store.ts'

const MAX_FILTERS = 100

type Scalar = string | number | boolean

/**
 * `properties` of the events API: a JSON list of `{key, value, operator, type}`; only event
 * properties can match here. Every operator event SQL runs is accepted (the operator table's
 * `runsOn.events`), and each filter's value is checked against the operator's value shape before it
 * reaches the store: a non-empty list or a scalar for exact/is_not, a scalar for the text operators,
 * a valid RE2 pattern for regex, a number for gt/gte/lt/lte, two numbers for between, a date for the
 * date operators, a string for versions. Anything else is a 400 on `properties`. The store runs them
 * with the query engine's SQL (storage/event-sql), so `icontains` is a literal substring there too.
 */
export function readPropertyFilters(raw: string | undefined): EventPropertyFilter[] {
  if (raw === undefined || raw === '') return []
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw validationError('properties', 'Properties are unparsable!')
  }
  if (!Array.isArray(parsed)) throw validationError('properties', 'properties must be a JSON list of property filters.')
  if (parsed.length > MAX_FILTERS) throw validationError('properties', `at most ${MAX_FILTERS} property filters are allowed.`)
  return parsed.map((f: unknown, i: number) => {
    const bad = (why: string): never => {
      throw validationError('properties', `property filter ${i}: ${why}`)
    }
    const filter = f as Record<string, unknown>
    if (typeof filter !== 'object' || filter === null || Array.isArray(filter) || typeof filter.key !== 'string') {
      return bad('needs a string key.')
    }
    if (filter.type !== undefined && filter.type !== 'event') {
      return bad(`filters of type "${shown(filter.type)}" are not supported on events yet.`)
    }
    const operator = filter.operator === undefined || filter.operator === null ? 'exact' : filter.operator
    if (!isPropertyOperator(operator) || !PROPERTY_OPERATORS[operator].runsOn.events) return bad(`unsupported operator "${shown(operator)}".`)
    const key = cleanText(filter.key)
    const value = readValue(PROPERTY_OPERATORS[operator].value, filter.value, (why) => bad(`${operator} ${why}`))
    return value === undefined ? { key, operator } : { key, operator, value }
  })
}

const isScalar = (x: unknown): x is Scalar => typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x))
const text = (x: Scalar): Scalar => (typeof x === 'string' ? cleanText(x) : x)
const toNumber = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? (parseRustFloat(v.trim()) ?? NaN) : NaN)

/** A filter value checked against its operator's shape (cleaned text), or `bad(why)`. */
function readValue(shape: OperatorValue, v: unknown, bad: (why: string) => never): unknown {
  switch (shape) {
    case 'none':
      return undefined
    case 'scalars':
    case 'texts': {
      const list = Array.isArray(v) ? v : [v]
      if (list.length === 0) return bad('needs at least one value.')
      if (!list.every(isScalar)) return bad('values must be strings, numbers or booleans.')
      return list.map(text)
    }
    case 'text':
      if (!isScalar(v)) return bad('needs a string value.')
      return text(v)
    case 'regex': {
      if (typeof v !== 'string') return bad('needs a regular expression string.')
      const pattern = cleanText(v)
      if (compileRegex(pattern) === null) return bad(`"${pattern.slice(0, 100)}" is not a valid regular expression.`)
      return pattern
    }
    case 'number': {
      const n = toNumber(v)
      if (!Number.isFinite(n)) return bad('needs a number.')
      return n
    }
    case 'range': {
      const pair = Array.isArray(v) && v.length === 2 ? v.map(toNumber) : []
      if (pair.length !== 2 || !pair.every(Number.isFinite) || pair[0]! > pair[1]!) return bad('needs two numbers, low then high.')
      return pair
    }
    case 'date':
      if (typeof v !== 'string' || parseFilterDate(v) === null) return bad('needs a date (ISO 8601 or relative, as -7d).')
      return cleanText(v)
    case 'semver':
      if (typeof v !== 'string' || v.trim() === '') return bad('needs a version string.')
      return cleanText(v)
    case 'cohort':
    case 'flag':
      return bad('is not supported on events.')
    default:
      return assertNever(shape)
  }
}

/** A client value for an error message: strings cleaned and cut, other values by type (never `String()` of a deep array). */
function shown(v: unknown): string {
  return typeof v === 'string' ? cleanText(v.slice(0, 100)) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : Array.isArray(v) ? 'a list' : v === null ? 'null' : 'an object'
}
