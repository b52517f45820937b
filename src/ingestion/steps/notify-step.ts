import type { StoredEvent } from '../event-store.ts'
import { propertiesOf } from '../event-properties.ts'
import { crashPoint } from '../../shared/crash-points.ts'
import { ok, type BatchStep } from '../results.ts'
import type { GroupRef, NotificationRuleStore, ProjectRules } from '../../modules/notifications/notification-rules.ts'
import type { OutboxStore } from '../../modules/notifications/outbox-store.ts'
import type { EventGroup } from '../../domain/notifications/format-action-message.ts'
import { planMessages, type MatcherCache, type NotifyEvent } from '../../modules/notifications/plan-messages.ts'

/**
 * After the store: finds the messages the batch's events send (actions that notify, webhook
 * destinations) and writes them to the outbox, set-based (one read of the rules, one of the groups
 * when a chat template names them, one insert). A redelivered batch plans the same messages under
 * the same keys, so the outbox gets each once; a failure to write fails the batch, which the queue
 * delivers again (the store skips what it has).
 */
export function createNotifyStep(deps: { rules: NotificationRuleStore; outbox: OutboxStore; siteUrl: string; onEnqueued?: () => void }): BatchStep<StoredEvent, StoredEvent> {
  const cache: MatcherCache = new Map()
  return {
    name: 'notify',
    async run(batch) {
      const rules = await deps.rules.rulesFor([...new Set(batch.map((e) => e.projectId))])
      const active = new Set(rules.filter((r) => r.actions.length > 0 || r.destinations.length > 0).map((r) => r.projectId))
      if (active.size > 0) {
        const stored = batch.filter((e) => active.has(e.projectId))
        const events = stored.map(toNotifyEvent)
        await addGroups(stored, events, rules, deps.rules)
        const messages = planMessages(events, rules, deps.siteUrl, cache)
        if (messages.length > 0 && (await deps.outbox.enqueue(messages)) > 0) deps.onEnqueued?.()
        if (messages.length > 0) crashPoint('notify.after-enqueue')
      }
      return batch.map((e) => ok(e))
    },
  }
}

/**
 * The event as the planner reads it; its properties and person properties are parsed on first read,
 * if ever. A class with its getters on the prototype: one is made per stored event.
 */
class StoredNotifyEvent implements NotifyEvent {
  readonly uuid: string
  readonly projectId: number
  readonly event: string
  readonly distinctId: string
  readonly timestamp: Date
  readonly elementsChain: string
  readonly personId: string | null
  groups?: NotifyEvent['groups']
  private parsedPerson: Record<string, unknown> | undefined
  constructor(private readonly stored: StoredEvent) {
    this.uuid = stored.uuid
    this.projectId = stored.projectId
    this.event = stored.event
    this.distinctId = stored.distinctId
    this.timestamp = stored.timestamp
    this.elementsChain = stored.elementsChain
    this.personId = stored.personId
  }
  get properties(): Record<string, unknown> {
    return propertiesOf(this.stored)
  }
  get personProperties(): Record<string, unknown> {
    const text = this.stored.personProperties
    return (this.parsedPerson ??= text ? (JSON.parse(text) as Record<string, unknown>) : {})
  }
}

function toNotifyEvent(e: StoredEvent): NotifyEvent {
  return new StoredNotifyEvent(e)
}

/**
 * PostHog's `[groups.<type>...]` tokens: each event of a project whose chat templates name groups
 * gets its groups (`$group_0..4`) by type name with their properties, read in one statement.
 */
async function addGroups(stored: readonly StoredEvent[], events: NotifyEvent[], rules: readonly ProjectRules[], store: NotificationRuleStore): Promise<void> {
  const naming = new Set(rules.filter((r) => r.chatWebhook && r.actions.some((a) => a.notify && a.messageFormat.includes('[groups'))).map((r) => r.projectId))
  if (naming.size === 0) return
  const refs = new Map<string, GroupRef>()
  const refKey = (r: GroupRef) => `${r.projectId}:${r.index}:${r.key}`
  for (const e of stored) {
    if (!naming.has(e.projectId)) continue
    e.groups?.forEach((key, index) => {
      if (key !== null && key !== undefined) refs.set(refKey({ projectId: e.projectId, index, key }), { projectId: e.projectId, index, key })
    })
  }
  const found = new Map((await store.groupsOf([...refs.values()])).map((g) => [refKey(g), g]))
  stored.forEach((e, i) => {
    if (!naming.has(e.projectId)) return
    const groups: Record<string, EventGroup> = {}
    e.groups?.forEach((key, index) => {
      const g = key === null || key === undefined ? undefined : found.get(refKey({ projectId: e.projectId, index, key }))
      if (g) groups[g.type] = { index: g.index, key: g.key, properties: g.properties }
    })
    events[i]!.groups = groups
  })
}
