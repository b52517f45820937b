import { readObject, readString, type Body } from '../../http/drf-fields.ts'
import type { PropertyFilter } from '../../domain/properties/property-filter.ts'
import { KNOWN_OPERATORS } from '../../domain/properties/property-operators.ts'
import { compileRegex } from '../../domain/properties/compile-regex.ts'
import { PERSON_FILTER_OPERATORS } from './person-store.ts'
import { validationError } from '../../shared/errors.ts'
import type { PersonListQuery } from './person-types.ts'

const MAX_FILTERS = 100
const MAX_TEXT = 1000

type Query = Record<string, unknown>

/** A query parameter given at most once, as text (`?a=1&a=2` is a 400 naming it). */
export function queryText(q: Query, name: string): string | undefined {
  const v = q[name]
  if (v === undefined) return undefined
  if (typeof v !== 'string') throw validationError(name, `${name} must be given once.`)
  if (v.length > MAX_TEXT) throw validationError(name, `${name} must be at most ${MAX_TEXT} characters.`, 'max_length')
  return v
}

/** The filters of `GET .../persons/` (PostHog's `distinct_id`, `email`, `search`, `properties`). */
export function readPersonListQuery(q: Query): PersonListQuery {
  const nonEmpty = (name: string) => {
    const v = queryText(q, name)
    return v === undefined || v === '' ? undefined : v
  }
  return {
    distinctId: nonEmpty('distinct_id'),
    email: nonEmpty('email'),
    search: nonEmpty('search')?.trim() || undefined,
    properties: readPersonPropertyFilters(queryText(q, 'properties')),
  }
}

/**
 * `properties`: a JSON list of person property filters `{key, value, operator, type}`. A filter of
 * another `type` (event, cohort...) cannot apply to a person and is refused rather than ignored;
 * an operator the store cannot run (`in`, `not_in`, `flag_evaluates_to`) is refused naming it.
 */
export function readPersonPropertyFilters(raw: string | undefined): PropertyFilter[] {
  if (raw === undefined || raw === '') return []
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw validationError('properties', 'Properties are unparsable!')
  }
  // PostHog also takes a property group {type: "AND", values: [...]}: a flat AND group is the same list.
  if (isRecord(parsed) && parsed.type === 'AND' && Array.isArray(parsed.values) && parsed.values.every((v) => !isRecord(v) || !('values' in v))) {
    parsed = parsed.values
  }
  if (!Array.isArray(parsed)) throw validationError('properties', 'properties must be a JSON list of property filters.')
  if (parsed.length > MAX_FILTERS) throw validationError('properties', `at most ${MAX_FILTERS} property filters are allowed.`)
  return parsed.map((f: unknown, i: number) => {
    const bad = (why: string): never => {
      throw validationError('properties', `property filter ${i}: ${why}`)
    }
    if (!isRecord(f) || typeof f.key !== 'string' || f.key === '') return bad('needs a non-empty string key.')
    if (f.type !== undefined && f.type !== null && f.type !== 'person') return bad(`filters of type "${String(f.type).slice(0, 50)}" do not apply to persons.`)
    const operator = f.operator === undefined || f.operator === null ? 'exact' : f.operator
    if (typeof operator !== 'string' || !KNOWN_OPERATORS.has(operator)) return bad(`unknown operator "${String(operator).slice(0, 50)}".`)
    if (!PERSON_FILTER_OPERATORS.has(operator)) return bad(`the operator "${operator}" is not supported on persons yet.`)
    if ((operator === 'regex' || operator === 'not_regex') && (typeof f.value !== 'string' || compileRegex(f.value) === null)) {
      return bad(`"${String(f.value).slice(0, 100)}" is not a valid regular expression (RE2 syntax, no back-references or look-arounds).`)
    }
    return { key: f.key, value: f.value, operator, type: 'person' }
  })
}

/** `PATCH .../persons/:id/`: `properties` (an object, required) to `$set` on the person. */
export function readPersonUpdate(body: Body): Record<string, unknown> {
  if (body.properties === undefined) throw validationError('properties', 'This field is required.', 'required')
  return readObject(body.properties, 'properties')!
}

/** `POST .../update_property/`: `{key, value}`, both required, value not null (PostHog). */
export function readUpdateProperty(body: Body): { key: string; value: unknown } {
  if (body.key === undefined || body.key === null) throw validationError('key', 'This field is required.', 'required')
  if (body.value === undefined || body.value === null) throw validationError('value', 'This field is required.', 'required')
  return { key: readString(body.key, 'key', { trim: false, maxLength: MAX_TEXT })!, value: body.value }
}

/** `POST .../delete_property/`: `{$unset: key}` (one key, as PostHog takes it). */
export function readDeleteProperty(body: Body): string {
  if (body.$unset === undefined || body.$unset === null) throw validationError('$unset', 'This field is required.', 'required')
  return readString(body.$unset, '$unset', { trim: false, maxLength: MAX_TEXT })!
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
