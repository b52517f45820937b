/**
 * An action's chat message, formatted as PostHog's ingestion formats `post_to_slack` messages
 * (plugin-server `action-webhook-formatter.ts`): tokens in square brackets (`[action.name]`,
 * `[person]`, `[event.properties.$browser]`...), a backslash escapes a bracket. Slack incoming
 * webhooks (a URL containing `slack.com`) get `{text, blocks}` with Slack's link syntax and
 * escaping; every other URL (Discord, Teams, any JSON endpoint) gets `{text}` in markdown.
 */
export interface ActionMessageInput {
  webhookUrl: string
  /** The action's `chat_message_format`; empty or null: PostHog's default. */
  messageFormat: string | null
  action: { id: number; name: string }
  event: {
    uuid: string
    event: string
    distinctId: string
    /** ISO-8601, as the event API shows it. */
    timestamp: string
    properties: Record<string, unknown>
    personProperties: Record<string, unknown>
    /** The event's groups by group type (`organization`), with the group's properties; absent: none. */
    groups?: Readonly<Record<string, EventGroup>>
  }
  projectId: number
  /** Tally's public URL, for the links (`http://127.0.0.1:8000`). */
  siteUrl: string
  /** The project's person display-name properties; PostHog's default list when absent. */
  personDisplayNameProperties?: readonly string[]
}

/** One of an event's groups: its type's index, its key (`$groups`), its properties (`{}` before a `$groupidentify`). */
export interface EventGroup {
  index: number
  key: string
  properties: Record<string, unknown>
}

/** PostHog's default `slack_message_format` (posthog/models/action/action.py). */
export const DEFAULT_ACTION_MESSAGE_FORMAT = '[action.name] was triggered by [person]'

// PostHog's list (plugin-server, synced with api/person.py).
const DEFAULT_DISPLAY_NAME_PROPERTIES = ['email', 'Email', 'name', 'Name', 'username', 'Username', 'UserName']
const TOKEN = /(?<!\\)\[(.*?)(?<!\\)\]/g

export type ChatPayload = { text: string; blocks?: Array<{ type: 'section'; text: { type: 'mrkdwn'; text: string } }> }

/** True for a Slack incoming webhook, whose body differs from the others'. */
export function isSlackWebhook(url: string): boolean {
  return url.toLowerCase().includes('slack.com')
}

/** The body to POST to the project's incoming webhook for one matched event. */
export function formatActionMessage(input: ActionMessageInput): ChatPayload {
  const slack = isSlackWebhook(input.webhookUrl)
  const [text, markdown] = formatted(input, slack)
  return slack ? { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: markdown } }] } : { text: markdown }
}

function formatted(input: ActionMessageInput, slack: boolean): [string, string] {
  const template = input.messageFormat || DEFAULT_ACTION_MESSAGE_FORMAT
  const links = linksOf(input)
  try {
    // Each token's value in place; escaped brackets in the text between become plain ones. (PostHog
    // goes through util.format's `%s`, which also rewrites a `%s` or `%d` the user typed; here such text stays.)
    let text = ''
    let markdown = ''
    let at = 0
    for (const m of template.matchAll(TOKEN)) {
      const literal = unescapeBrackets(template.slice(at, m.index))
      const [t, md] = tokenValue(m[1]!.split('.'), input, links, slack)
      text += literal + t
      markdown += literal + md
      at = m.index + m[0].length
    }
    const rest = unescapeBrackets(template.slice(at))
    return [text + rest, markdown + rest]
  } catch {
    const [name, nameMarkdown] = link(input.action.name, links.action, slack)
    return [
      `⚠ Error: There are one or more formatting errors in the message template for action "${name}".`,
      `*⚠ Error: There are one or more formatting errors in the message template for action "${nameMarkdown}".*`,
    ]
  }
}

const unescapeBrackets = (text: string) => text.replace(/\\(\[|\])/g, '$1')

interface Links {
  person: string
  action: string
  event: string
}

function linksOf(input: ActionMessageInput): Links {
  const project = `${input.siteUrl}/project/${input.projectId}`
  return {
    person: `${project}/person/${encodeURIComponent(input.event.distinctId)}`,
    action: `${project}/action/${input.action.id}`,
    event: `${project}/events/${encodeURIComponent(input.event.uuid)}/${encodeURIComponent(input.event.timestamp)}`,
  }
}

type Pair = [string, string]

function tokenValue(parts: string[], input: ActionMessageInput, links: Links, slack: boolean): Pair {
  const [kind, field] = parts
  const e = input.event
  const plain = (v: unknown) => plainValue(v, slack)
  switch (kind) {
    case 'user':
      // Deprecated in PostHog, still honoured: [user.name] is the person, [user.x] the event's `$x`.
      return field === 'name' ? person(input, links, slack) : plain(e.properties[`$${field}`])
    case 'person':
      if (parts.length === 1) return person(input, links, slack)
      if (field === 'link') return plain(links.person)
      if (field === 'properties' && parts.length > 2) return plain(valueAtPath(e.personProperties, parts.slice(2)))
      return ['', '']
    case 'action':
      if (field === 'name') return link(input.action.name, links.action, slack)
      if (field === 'link') return plain(links.action)
      return ['', '']
    case 'event':
      if (parts.length === 1) return link(e.event, links.event, slack)
      if (field === 'link') return plain(links.event)
      if (field === 'uuid') return plain(e.uuid)
      if (field === 'name' || field === 'event') return plain(e.event)
      if (field === 'timestamp') return plain(e.timestamp)
      if (field === 'distinct_id') return plain(e.distinctId)
      if (field === 'properties' && parts.length > 2) return plain(valueAtPath(e.properties, parts.slice(2)))
      return ['', '']
    case 'groups':
      return groupValue(parts, input, slack)
    default:
      throw new Error(`unknown token ${kind}`)
  }
}

/** `[groups.<type>]` (a link named by the group's `name` or key), `[groups.<type>.link]`, `[groups.<type>.properties.X]`. */
function groupValue(parts: string[], input: ActionMessageInput, slack: boolean): Pair {
  // PostHog has no summary of all the groups.
  if (parts.length === 1) return ['NOT SUPPORTED', 'NOT SUPPORTED']
  const type = parts[1]!
  const group = input.event.groups && Object.hasOwn(input.event.groups, type) ? input.event.groups[type] : undefined
  if (!group) {
    const missing = `(event without '${type}')`
    return [missing, missing]
  }
  const url = `${input.siteUrl}/project/${input.projectId}/groups/${group.index}/${encodeURIComponent(group.key)}`
  if (parts.length === 2) return link(stringify(group.properties.name || group.key), url, slack)
  const plain = (v: unknown) => plainValue(v, slack)
  if (parts[2] === 'link') return plain(url)
  if (parts[2] === 'properties' && parts.length > 3) return plain(valueAtPath(group.properties, parts.slice(3)))
  return ['', '']
}

function person(input: ActionMessageInput, links: Links, slack: boolean): Pair {
  const props = input.event.personProperties
  const keys = input.personDisplayNameProperties ?? DEFAULT_DISPLAY_NAME_PROPERTIES
  const key = keys.find((k) => props[k])
  const raw = key === undefined ? undefined : props[key]
  const custom = typeof raw === 'string' ? raw : JSON.stringify(raw)
  return link((custom || input.event.distinctId).trim(), links.person, slack)
}

function link(name: string, url: string, slack: boolean): Pair {
  if (slack) return [escapeSlack(name), `<${escapeSlack(url)}|${escapeSlack(name)}>`]
  return [escapeMarkdown(name), `[${escapeMarkdown(name)}](${escapeMarkdown(url)})`]
}

/** A value as text, escaped, the same in the text and the markdown. */
function plainValue(v: unknown, slack: boolean): Pair {
  const s = escapeFor(stringify(v), slack)
  return [s, s]
}

function escapeFor(text: string, slack: boolean): string {
  return slack ? escapeSlack(text) : escapeMarkdown(text)
}

// https://api.slack.com/reference/surfaces/formatting#escaping
function escapeSlack(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

const MARKDOWN_CHARS = new Set(['\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '!'])
const LINE_START_CHARS = new Set(['#', '-', '+'])

function escapeMarkdown(text: string): string {
  let out = ''
  let lineStart = true
  for (const ch of text) {
    if (lineStart ? LINE_START_CHARS.has(ch) : MARKDOWN_CHARS.has(ch)) out += '\\'
    out += ch
    lineStart = ch === '\n' || ch === '\r'
  }
  return out
}

/** PostHog's `stringify`: strings as they are, undefined and null as words, the rest as JSON. */
function stringify(v: unknown): string {
  if (typeof v === 'string') return v
  if (v === undefined) return 'undefined'
  if (v === null) return 'null'
  return JSON.stringify(v)
}

/** `a.b.c` into nested objects (PostHog's getPropertyValueByPath: the first key, then each nested one). */
function valueAtPath(bag: Record<string, unknown>, path: string[]): unknown {
  let current: unknown = bag
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}
