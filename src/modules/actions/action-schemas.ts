import { has, readBool, readChoice, readDateTime, readList, readObject, readString, readTags, type Body } from '../../http/drf-fields.ts'
import { validationError } from '../../shared/errors.ts'
import { MATCHING, type ActionInput, type ActionStep, type PropertyFilter } from './action-types.ts'

/** A step as sent: its id only when the client kept one from an earlier read. */
export type StepInput = Omit<ActionStep, 'id'> & { id?: string }

const STEP_STRINGS = ['event', 'tag_name', 'text', 'href', 'selector', 'url', 'name'] as const
const STEP_MATCHINGS = ['text_matching', 'href_matching', 'url_matching'] as const

/**
 * Step `properties`: PostHog's list of property filters, or the spec's map of property name to value
 * (read as `exact` event-property filters). Always stored as the list.
 */
function readProperties(v: unknown, attr: string): PropertyFilter[] {
  if (v === null || v === undefined) return []
  if (!Array.isArray(v)) {
    const map = readObject(v, attr)!
    return Object.entries(map).map(([key, value]) => ({ key, value, operator: 'exact', type: 'event' }))
  }
  return v.map((f, i) => {
    const filter = readObject(f, `${attr}__${i}`)!
    if (has(filter, 'key')) readString(filter.key, `${attr}__${i}__key`, { allowBlank: true, trim: false })
    return filter as PropertyFilter
  })
}

function readStep(raw: unknown, attr: string): StepInput {
  const s = readObject(raw, attr)!
  const step = { properties: readProperties(s.properties, `${attr}__properties`) } as StepInput
  for (const f of STEP_STRINGS) step[f] = has(s, f) ? readString(s[f], `${attr}__${f}`, { allowNull: true, allowBlank: true, trim: false }) : null
  for (const f of STEP_MATCHINGS) step[f] = has(s, f) ? readChoice(s[f], `${attr}__${f}`, MATCHING, { allowNull: true }) : null
  step.url_matching ??= 'contains'
  if (has(s, 'id') && (typeof s.id === 'string' || typeof s.id === 'number')) step.id = String(s.id)
  return step
}

/**
 * An action create/update body. The spec's `post_to_chat`/`chat_message_format` and PostHog's
 * `post_to_slack`/`slack_message_format` are both accepted; the spec's names win when both are sent.
 */
export function parseActionBody(body: Body): { input: Omit<ActionInput, 'steps'>; steps?: StepInput[] } {
  const input: Omit<ActionInput, 'steps'> = {}
  if (has(body, 'name')) input.name = readString(body.name, 'name', { allowNull: true, maxLength: 400 })
  if (has(body, 'description')) input.description = readString(body.description, 'description', { allowBlank: true })!
  if (has(body, 'tags')) input.tags = readTags(body.tags)
  for (const key of ['post_to_slack', 'post_to_chat']) if (has(body, key)) input.postToChat = readBool(body[key], key)
  for (const key of ['slack_message_format', 'chat_message_format']) {
    if (has(body, key)) input.chatMessageFormat = readString(body[key], key, { allowBlank: true, maxLength: 600, trim: false })!
  }
  if (has(body, 'deleted')) input.deleted = readBool(body.deleted, 'deleted')
  if (has(body, 'last_calculated_at')) input.lastCalculatedAt = readDateTime(body.last_calculated_at, 'last_calculated_at')!
  if (has(body, 'pinned_at')) input.pinnedAt = body.pinned_at === '' ? null : readDateTime(body.pinned_at, 'pinned_at', { allowNull: true })
  if (!has(body, 'steps')) return { input }
  return { input, steps: readList(body.steps, 'steps').map((s, i) => readStep(s, `steps__${i}`)) }
}

const MAX_QUERY_TEXT = 1000

/**
 * The query of `GET .../actions/people/`: the action as PostHog's legacy people endpoints name it
 * (`actions=[{"id": N}]`, `entity_id` with `entity_type=actions`, or `action_id`), and `date_from` /
 * `date_to` (relative such as `-7d`, `all`, or absolute). No action named is a 400 on `actions`.
 */
export function readPeopleQuery(q: Record<string, unknown>): { actionId: number; range: { dateFrom?: string; dateTo?: string } } {
  const text = (name: string): string | undefined => {
    const v = q[name]
    if (v === undefined || v === '') return undefined
    if (typeof v !== 'string') throw validationError(name, `${name} must be given once.`)
    if (v.length > MAX_QUERY_TEXT) throw validationError(name, `${name} must be at most ${MAX_QUERY_TEXT} characters.`, 'max_length')
    return v
  }
  const id = (raw: unknown, attr: string): number => {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN
    if (!Number.isSafeInteger(n) || n <= 0 || n > 2_147_483_647) throw validationError(attr, 'A valid action id is required.', 'invalid')
    return n
  }
  let actionId: number | undefined
  const actions = text('actions')
  if (actions !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(actions)
    } catch {
      throw validationError('actions', 'actions must be a JSON list of {"id": N}.', 'invalid')
    }
    const first = Array.isArray(parsed) ? (parsed[0] as Record<string, unknown> | undefined) : undefined
    if (typeof first !== 'object' || first === null) throw validationError('actions', 'actions must be a JSON list of {"id": N}.', 'invalid')
    actionId = id(first.id, 'actions')
  } else if (text('entity_id') !== undefined) {
    const type = text('entity_type') ?? text('type')
    if (type !== undefined && type !== 'actions') throw validationError('entity_type', 'Only actions have people here (entity_type=actions).', 'invalid')
    actionId = id(text('entity_id'), 'entity_id')
  } else if (text('action_id') !== undefined) {
    actionId = id(text('action_id'), 'action_id')
  }
  if (actionId === undefined) throw validationError('actions', 'An action is required: actions=[{"id": N}] or action_id=N.', 'required')
  return { actionId, range: { dateFrom: text('date_from'), dateTo: text('date_to') } }
}
