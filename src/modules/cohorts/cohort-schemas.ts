import { has, readBool, readList, readObject, readString, type Body } from '../../http/drf-fields.ts'
import { validationError } from '../../shared/errors.ts'

/** The fields a cohort create/update body sent, read with DRF's field rules; absent fields stay undefined. */
export interface CohortBody {
  name?: string
  description?: string
  isStatic?: boolean
  /** `null` clears; the service checks the property groups against the project's cohorts. */
  filters?: Record<string, unknown> | null
  groups?: unknown[]
  deleted?: boolean
  /** Static cohort members: CSV text (first column, optional `distinct_id` header) and distinct ids. */
  csv?: string
  distinctIds?: string[]
}

/** A cohort create/update body as PostHog's CohortSerializer reads it. */
export function parseCohortBody(body: Body): CohortBody {
  const out: CohortBody = {}
  if (has(body, 'name')) out.name = readString(body.name, 'name', { allowBlank: true, maxLength: 400 })!
  if (has(body, 'description')) out.description = readString(body.description, 'description', { allowBlank: true, maxLength: 1000 })!
  if (has(body, 'is_static')) out.isStatic = readBool(body.is_static, 'is_static')
  if (has(body, 'filters')) out.filters = readObject(body.filters, 'filters', { allowNull: true })
  if (has(body, 'groups')) out.groups = readList(body.groups, 'groups')
  if (has(body, 'deleted')) out.deleted = readBool(body.deleted, 'deleted')
  if (has(body, 'csv')) out.csv = refuseNul(readString(body.csv, 'csv', { allowBlank: true, trim: false })!, 'csv')
  if (has(body, 'distinct_ids')) {
    out.distinctIds = readList(body.distinct_ids, 'distinct_ids').map((d, i) => refuseNul(readString(d, `distinct_ids__${i}`, { trim: false })!, `distinct_ids__${i}`))
  }
  return out
}

/** Member lists with U+0000 are refused: no stored distinct id holds one (capture turns it into U+FFFD). */
function refuseNul(s: string, attr: string): string {
  if (s.includes('\u0000')) throw validationError(attr, 'Null characters are not allowed.', 'invalid_input')
  return s
}

/** `add_persons_to_static_cohort`: person UUIDs in `person_ids`. */
export function parsePersonIds(body: Body): string[] {
  if (!has(body, 'person_ids')) throw validationError('person_ids', 'This field is required.', 'required')
  return readList(body.person_ids, 'person_ids').map((id, i) => readString(id, `person_ids__${i}`)!)
}
