import { has, readBool, readChoice, readInt, readList, readObject, readString, readTags, type Body } from '../../http/drf-fields.ts'
import { validationError } from '../../shared/errors.ts'
import { RESTRICTION_LEVELS, type DashboardInput, type DashboardTemplate, type TemplateTile, type TileInput } from './dashboard-types.ts'

export interface DashboardRequest {
  input: DashboardInput
  useTemplate?: string
  useDashboard?: number
  duplicateTiles: boolean
  deleteInsights: boolean
  tiles?: TileInput[]
}

/** A dashboard create/update body (DashboardSerializer's writable fields) read into its parts. */
export function parseDashboardBody(body: Body): DashboardRequest {
  const input: DashboardInput = {}
  if (has(body, 'name')) input.name = readString(body.name, 'name', { allowNull: true, allowBlank: true, maxLength: 400 })
  if (has(body, 'description')) input.description = readString(body.description, 'description', { allowBlank: true })!
  if (has(body, 'pinned')) input.pinned = readBool(body.pinned, 'pinned')
  if (has(body, 'deleted')) input.deleted = readBool(body.deleted, 'deleted')
  if (has(body, 'filters')) input.filters = readObject(body.filters, 'filters', { message: 'Filters must be a dictionary' })!
  if (has(body, 'tags')) input.tags = readTags(body.tags)
  if (has(body, 'restriction_level')) input.restrictionLevel = readChoice(body.restriction_level, 'restriction_level', RESTRICTION_LEVELS)!
  const req: DashboardRequest = {
    input,
    duplicateTiles: has(body, 'duplicate_tiles') ? readBool(body.duplicate_tiles, 'duplicate_tiles') : false,
    deleteInsights: has(body, 'delete_insights') ? readBool(body.delete_insights, 'delete_insights') : false,
  }
  if (has(body, 'use_template')) req.useTemplate = readString(body.use_template, 'use_template', { allowBlank: true })!
  if (has(body, 'use_dashboard') && body.use_dashboard !== null) req.useDashboard = readInt(body.use_dashboard, 'use_dashboard')!
  if (has(body, 'tiles')) req.tiles = readList(body.tiles, 'tiles').map((t, i) => parseTile(t, `tiles__${i}`))
  return req
}

function parseTile(raw: unknown, attr: string): TileInput {
  const t = readObject(raw, attr)!
  const tile: TileInput = {}
  if (has(t, 'id') && t.id !== null) tile.id = readInt(t.id, `${attr}__id`)!
  if (has(t, 'layouts')) tile.layouts = readObject(t.layouts, `${attr}__layouts`)!
  if (has(t, 'color')) tile.color = readString(t.color, `${attr}__color`, { allowNull: true, allowBlank: true, maxLength: 400 })
  if (has(t, 'deleted')) tile.deleted = readBool(t.deleted, `${attr}__deleted`)
  if (has(t, 'filters_overrides')) tile.filtersOverrides = readObject(t.filters_overrides, `${attr}__filters_overrides`, { allowNull: true })
  if (has(t, 'text') && t.text !== null) {
    const text = readObject(t.text, `${attr}__text`)!
    const body = readString(text.body ?? '', `${attr}__text__body`, { allowBlank: true, trim: false })!
    if (body.length > 4000) throw validationError(`${attr}__text__body`, 'Ensure this field has no more than 4000 characters.', 'max_length')
    tile.text = { body }
  }
  if (tile.id === undefined && tile.text === undefined) throw validationError(`${attr}__id`, 'This field is required.', 'required')
  return tile
}

/** `move_tile`'s body as PostHog's UI sends it: `{"tile": {"id": ...}, "toDashboard": <id>}`. */
export function parseMoveTile(body: Body): { tileId: number; toDashboard: number } {
  if (!has(body, 'tile')) throw validationError('tile', 'This field is required.', 'required')
  const tile = readObject(body.tile, 'tile')!
  if (!has(tile, 'id')) throw validationError('tile__id', 'This field is required.', 'required')
  const tileId = readInt(tile.id, 'tile__id')!
  if (!has(body, 'toDashboard')) throw validationError('toDashboard', 'This field is required.', 'required')
  return { tileId, toDashboard: readInt(body.toDashboard, 'toDashboard')! }
}

function typeError(attr: string, value: unknown, type: string): never {
  throw validationError(attr, `${JSON.stringify(value)} is not of type '${type}'`, 'invalid_input')
}

function checkType(obj: Body, key: string, type: 'string' | 'object' | 'array', attr: string, optional = false): void {
  if (!has(obj, key)) {
    if (optional) return
    throw validationError(attr, `'${key}' is a required property`, 'required')
  }
  const v = obj[key]
  const ok = type === 'array' ? Array.isArray(v) : type === 'object' ? v !== null && typeof v === 'object' && !Array.isArray(v) : typeof v === type
  if (!ok && !(optional && v === null)) typeError(attr, v, type)
}

/**
 * `create_from_template_json`'s `template`, checked as PostHog's `dashboard_template_schema.json`
 * checks it: `template_name`, `dashboard_description`, `dashboard_filters` and at least one tile.
 */
export function parseTemplateJson(body: Body): DashboardTemplate {
  if (!has(body, 'template')) throw validationError('template', "Request body must be a JSON object with a 'template' key", 'invalid_input')
  const template = readObject(body.template, 'template')!
  checkType(template, 'template_name', 'string', 'template__template_name')
  checkType(template, 'dashboard_description', 'string', 'template__dashboard_description')
  checkType(template, 'dashboard_filters', 'object', 'template__dashboard_filters')
  checkType(template, 'tiles', 'array', 'template__tiles')
  checkType(template, 'tags', 'array', 'template__tags', true)
  const tiles = template.tiles as unknown[]
  if (tiles.length === 0) throw validationError('template__tiles', '[] is too short', 'invalid_input')
  tiles.forEach((t, i) => {
    if (t === null || typeof t !== 'object' || Array.isArray(t)) typeError(`template__tiles__${i}`, t, 'object')
  })
  const tags = ((template.tags as unknown[] | null) ?? []).map((t, i) => (typeof t === 'string' ? t : typeError(`template__tags__${i}`, t, 'string')))
  return {
    template_name: template.template_name as string,
    dashboard_description: template.dashboard_description as string,
    dashboard_filters: template.dashboard_filters as Record<string, unknown>,
    tags,
    tiles: tiles as TemplateTile[],
  }
}
