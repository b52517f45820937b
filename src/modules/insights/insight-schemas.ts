import { has, readBool, readInt, readList, readObject, readString, type Body } from '../../http/drf-fields.ts'
import { validationError } from '../../shared/errors.ts'
import type { InsightInput } from './insight-types.ts'

/** An insight create/update body read into its input, plus the dashboards it should sit on (if given). */
export function parseInsightBody(body: Body): { input: InsightInput; dashboards?: number[] } {
  const input: InsightInput = {}
  if (has(body, 'name')) input.name = readString(body.name, 'name', { allowNull: true, allowBlank: true, maxLength: 400 })
  if (has(body, 'description')) input.description = readString(body.description, 'description', { allowBlank: true, maxLength: 400 })!
  if (has(body, 'query')) input.query = readObject(body.query, 'query', { allowNull: true })
  if (has(body, 'filters')) input.filters = readObject(body.filters, 'filters')!
  if (has(body, 'deleted')) input.deleted = readBool(body.deleted, 'deleted')
  if (!has(body, 'dashboards')) return { input }
  const dashboards = readList(body.dashboards, 'dashboards').map((v) => {
    if (typeof v === 'boolean' || (typeof v !== 'number' && typeof v !== 'string')) {
      throw validationError('dashboards', `Incorrect type. Expected pk value, received ${Array.isArray(v) ? 'list' : v === null ? 'NoneType' : typeof v === 'object' ? 'dict' : 'bool'}.`, 'incorrect_type')
    }
    try {
      return readInt(v, 'dashboards')!
    } catch (err) {
      // An integer past the id column names no dashboard: DRF's PrimaryKeyRelatedField answer.
      const sub = (err as { extra?: { subCode?: unknown } }).extra?.subCode
      if (sub === 'max_value' || sub === 'min_value') throw validationError('dashboards', `Invalid pk "${String(v)}" - object does not exist.`, 'does_not_exist')
      throw validationError('dashboards', `Incorrect type. Expected pk value, received ${typeof v === 'string' ? 'str' : 'float'}.`, 'incorrect_type')
    }
  })
  return { input, dashboards: [...new Set(dashboards)] }
}
