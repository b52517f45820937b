import { has, readInt, readObject, readString, type Body } from '../../http/drf-fields.ts'
import { validationError } from '../../shared/errors.ts'

export interface GroupTypeNames {
  groupTypeIndex: number
  nameSingular: string | null
  namePlural: string | null
}

/** A group type create body (Tally's addition): `group_type`, required. */
export function parseGroupTypeCreate(body: Body): string {
  if (!has(body, 'group_type')) throw validationError('group_type', 'This field is required.', 'required')
  return readString(body.group_type, 'group_type', { maxLength: 400 })!
}

/** `update_metadata`: one object or a list of `{group_type_index, name_singular, name_plural}`. */
export function parseMetadataUpdates(raw: unknown): GroupTypeNames[] {
  const items = Array.isArray(raw) ? raw : [raw ?? {}]
  return items.map((item, i) => {
    const prefix = Array.isArray(raw) ? `${i}__` : ''
    const o = readObject(item, prefix === '' ? 'non_field_errors' : `${i}`)!
    if (!has(o, 'group_type_index')) throw validationError(`${prefix}group_type_index`, 'This field is required.', 'required')
    const name = (key: string) => (has(o, key) ? readString(o[key], `${prefix}${key}`, { allowNull: true, allowBlank: true, maxLength: 400 }) : null)
    return {
      groupTypeIndex: readInt(o.group_type_index, `${prefix}group_type_index`)!,
      nameSingular: name('name_singular'),
      namePlural: name('name_plural'),
    }
  })
}
