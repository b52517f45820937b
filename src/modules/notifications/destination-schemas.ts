import { has, readBool, readHttpUrl, readList, readObject, readString, type Body } from '../../http/drf-fields.ts'
import { validationError } from '../../shared/errors.ts'
import { renderBodyTemplate } from '../../domain/notifications/render-body-template.ts'
import type { DestinationFilters } from './notification-rules.ts'
import type { DestinationInput } from './destination-types.ts'
import type { PropertyFilter } from '../../domain/properties/property-filter.ts'

const MAX_FILTER_ITEMS = 100

/** A destination create/update body; `creating` requires `name` and `url`. */
export function parseDestinationBody(body: Body, creating: boolean): DestinationInput {
  const input: DestinationInput = {}
  if (has(body, 'name') || creating) input.name = readString(body.name, 'name', { maxLength: 400 })!
  if (has(body, 'url') || creating) input.url = readHttpUrl(body.url, 'url')!
  if (has(body, 'enabled')) input.enabled = readBool(body.enabled, 'enabled')
  if (has(body, 'deleted')) input.deleted = readBool(body.deleted, 'deleted')
  if (has(body, 'headers')) input.headers = readHeaders(body.headers)
  if (has(body, 'filters')) input.filters = readFilters(body.filters)
  if (has(body, 'body_template')) {
    const t = readString(body.body_template, 'body_template', { allowNull: true, allowBlank: true, trim: false, maxLength: 100_000 })
    input.bodyTemplate = t === null || t.trim() === '' ? null : checkTemplate(t)
  }
  return input
}

function readHeaders(v: unknown): Record<string, string> {
  const raw = readObject(v, 'headers')!
  const out: Record<string, string> = {}
  for (const [k, value] of Object.entries(raw)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k)) throw validationError('headers', `"${k}" is not a valid header name.`, 'invalid')
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) throw validationError('headers', `The value of "${k}" must be text on one line.`, 'invalid')
    out[k] = value
  }
  return out
}

function readFilters(v: unknown): DestinationFilters {
  const raw = readObject(v, 'filters')!
  const filters: DestinationFilters = {}
  if (has(raw, 'events')) filters.events = bounded(readList(raw.events, 'filters__events'), 'filters__events').map((e, i) => readString(e, `filters__events__${i}`, { trim: false })!)
  if (has(raw, 'actions')) {
    filters.actions = bounded(readList(raw.actions, 'filters__actions'), 'filters__actions').map((a, i) => {
      const id = typeof a === 'number' ? a : typeof a === 'string' && /^\d+$/.test(a) ? Number(a) : NaN
      if (!Number.isSafeInteger(id) || id <= 0 || id > 2_147_483_647) throw validationError(`filters__actions__${i}`, 'A valid action id is required.', 'invalid')
      return id
    })
  }
  if (has(raw, 'properties')) {
    filters.properties = bounded(readList(raw.properties, 'filters__properties'), 'filters__properties').map((f, i) => {
      const filter = readObject(f, `filters__properties__${i}`)!
      readString(filter.key, `filters__properties__${i}__key`, { allowBlank: true, trim: false })
      return filter as unknown as PropertyFilter
    })
  }
  return filters
}

function bounded<T>(list: T[], attr: string): T[] {
  if (list.length > MAX_FILTER_ITEMS) throw validationError(attr, `At most ${MAX_FILTER_ITEMS} items.`, 'max_length')
  return list
}

/** The template must give JSON for an event: checked once with sample values. */
function checkTemplate(template: string): string {
  try {
    renderBodyTemplate(template, { event: { uuid: '', event: '', distinct_id: '', timestamp: '', properties: {} }, person: { id: null, properties: {} }, project: { id: 0, name: '' } })
  } catch (err) {
    throw validationError('body_template', (err as Error).message, 'invalid')
  }
  return template
}
