import { compileAction, type ActionMatcher } from '../../domain/actions/match-action.ts'
import { formatActionMessage, type EventGroup } from '../../domain/notifications/format-action-message.ts'
import { compileBodyTemplate, DEFAULT_BODY_TEMPLATE, type BodyRenderer } from '../../domain/notifications/render-body-template.ts'
import type { DestinationRule, ProjectRules, RuleAction } from './notification-rules.ts'
import type { OutboxMessage } from './outbox-store.ts'

/** What the planner reads of a stored event. */
export interface NotifyEvent {
  uuid: string
  projectId: number
  event: string
  distinctId: string
  timestamp: Date
  elementsChain: string
  properties: Record<string, unknown>
  personId: string | null
  personProperties: Record<string, unknown>
  /** By group type, for the templates that name groups; absent when no message of the batch does. */
  groups?: Readonly<Record<string, EventGroup>>
}

/** Compiled matchers, kept while an action's steps stay the same, and compiled body templates. */
export type MatcherCache = Map<string, ActionMatcher | BodyRenderer | Error>

/**
 * The messages a micro-batch's stored events send: one per (event, notifying action) to the
 * project's incoming webhook, and one per (event, destination whose filters pass). Keys are stable
 * per event and target, so planning a redelivered batch again adds nothing to the outbox.
 */
export function planMessages(events: readonly NotifyEvent[], rules: readonly ProjectRules[], siteUrl: string, cache: MatcherCache): OutboxMessage[] {
  // Matchers are looked up once per batch and project, not per event.
  const byProject = new Map(rules.map((r) => [r.projectId, compiled(r, cache)]))
  const out: OutboxMessage[] = []
  const now = Date.now()
  for (const e of events) {
    const c = byProject.get(e.projectId)
    if (!c) continue
    const { rules: r } = c
    // The matchers read the event itself: its properties are parsed only if a check reads them.
    let matched: Set<number> | null = null
    for (const [id, matches] of c.actions) if (matches(e, now)) (matched ??= new Set()).add(id)
    if (r.chatWebhook && matched !== null) {
      for (const a of r.actions) if (a.notify && matched.has(a.id)) out.push(chatMessage(e, a, r, siteUrl))
    }
    for (const [d, properties, body] of c.destinations) {
      if (passes(d, e, matched) && (!properties || properties(e, now))) out.push(destinationMessage(e, d, body, r, siteUrl))
    }
  }
  return out
}

interface CompiledRules {
  rules: ProjectRules
  actions: Map<number, ActionMatcher>
  /** Each destination with the matcher of its property filters (null: none) and its compiled body template. */
  destinations: Array<[DestinationRule, ActionMatcher | null, BodyRenderer | Error]>
}

function compiled(r: ProjectRules, cache: MatcherCache): CompiledRules | null {
  if (r.actions.length === 0 && r.destinations.length === 0) return null
  return {
    rules: r,
    actions: new Map(r.actions.map((a) => [a.id, cachedMatcher(`${a.id}:${JSON.stringify(a.steps)}`, a.steps, cache)])),
    destinations: r.destinations.map((d) => {
      const properties = d.filters.properties ?? []
      // The action matcher's property semantics (event and person filters), as one step.
      const matcher = properties.length === 0 ? null : cachedMatcher(`destination:${d.id}:${JSON.stringify(properties)}`, [{ properties }], cache)
      return [d, matcher, cachedRenderer(d.bodyTemplate ?? DEFAULT_BODY_TEMPLATE, cache)]
    }),
  }
}

function cachedMatcher(key: string, steps: RuleAction['steps'], cache: MatcherCache): ActionMatcher {
  return cached(key, cache, () => compileAction(steps)) as ActionMatcher
}

/** The template compiled, or why it cannot be (templates are checked when saved; this is for older rows). */
function cachedRenderer(template: string, cache: MatcherCache): BodyRenderer | Error {
  return cached(`template:${template}`, cache, () => {
    try {
      return compileBodyTemplate(template)
    } catch (err) {
      return err as Error
    }
  }) as BodyRenderer | Error
}

function cached(key: string, cache: MatcherCache, make: () => ActionMatcher | BodyRenderer | Error): ActionMatcher | BodyRenderer | Error {
  let m = cache.get(key)
  if (!m) {
    if (cache.size > 10_000) cache.clear()
    m = make()
    cache.set(key, m)
  }
  return m
}

/** The destination's event and action filters: the event is one of the events or matches one of the actions (both empty: any). */
function passes(d: DestinationRule, e: NotifyEvent, matched: Set<number> | null): boolean {
  const events = d.filters.events ?? []
  const actions = d.filters.actions ?? []
  if (events.length === 0 && actions.length === 0) return true
  return events.includes(e.event) || (matched !== null && actions.some((id) => matched.has(id)))
}

function chatMessage(e: NotifyEvent, a: RuleAction, r: ProjectRules, siteUrl: string): OutboxMessage {
  const body = formatActionMessage({
    webhookUrl: r.chatWebhook!,
    messageFormat: a.messageFormat,
    action: { id: a.id, name: a.name },
    event: { uuid: e.uuid, event: e.event, distinctId: e.distinctId, timestamp: e.timestamp.toISOString(), properties: e.properties, personProperties: e.personProperties, groups: e.groups },
    projectId: e.projectId,
    siteUrl,
  })
  return { projectId: e.projectId, channel: 'chat', idempotencyKey: `chat:${a.id}:${e.uuid}`, url: r.chatWebhook!, headers: {}, body: JSON.stringify(body) }
}

function destinationMessage(e: NotifyEvent, d: DestinationRule, render: BodyRenderer | Error, r: ProjectRules, siteUrl: string): OutboxMessage {
  const projectUrl = `${siteUrl}/project/${e.projectId}`
  let timestamp: string | undefined
  const iso = () => (timestamp ??= e.timestamp.toISOString())
  // Each value is made only when the template names it (or names the whole event or person).
  const body =
    render instanceof Error
      ? JSON.stringify({ error: render.message, event: { uuid: e.uuid, event: e.event } })
      : render({
          event: {
            uuid: e.uuid,
            event: e.event,
            distinct_id: e.distinctId,
            get timestamp() {
              return iso()
            },
            get properties() {
              return e.properties
            },
            elements_chain: e.elementsChain,
            get url() {
              return `${projectUrl}/events/${encodeURIComponent(e.uuid)}/${encodeURIComponent(iso())}`
            },
          },
          person: {
            id: e.personId,
            get properties() {
              return e.personProperties
            },
            get url() {
              return `${projectUrl}/person/${encodeURIComponent(e.distinctId)}`
            },
          },
          project: { id: e.projectId, name: r.projectName, url: projectUrl },
        })
  return { projectId: e.projectId, channel: `destination:${d.id}`, idempotencyKey: `destination:${d.id}:${e.uuid}`, url: d.url, headers: d.headers, body }
}
