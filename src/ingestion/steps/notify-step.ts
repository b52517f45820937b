import type { StoredEvent } from '../event-store.ts'
import { propertiesOf } from '../event-properties.ts'
import { crashPoint } from '../../shared/crash-points.ts'
import { ok, type BatchStep } from '../results.ts'
import type { NotificationRuleStore } from '../../modules/notifications/notification-rules.ts'
import type { OutboxStore } from '../../modules/notifications/outbox-store.ts'
import { planMessages, type MatcherCache, type NotifyEvent } from '../../modules/notifications/plan-messages.ts'

/**
 * After the store: finds the messages the batch's events send (actions that notify, webhook
 * destinations) and writes them to the outbox, set-based (one read of the rules, one insert). A
 * redelivered batch plans the same messages under the same keys, so the outbox gets each once; a
 * failure to write fails the batch, which the queue delivers again (the store skips what it has).
 */
export function createNotifyStep(deps: { rules: NotificationRuleStore; outbox: OutboxStore; siteUrl: string; onEnqueued?: () => void }): BatchStep<StoredEvent, StoredEvent> {
  const cache: MatcherCache = new Map()
  return {
    name: 'notify',
    async run(batch) {
      const rules = await deps.rules.rulesFor([...new Set(batch.map((e) => e.projectId))])
      const active = new Set(rules.filter((r) => r.actions.length > 0 || r.destinations.length > 0).map((r) => r.projectId))
      if (active.size > 0) {
        const events = batch.filter((e) => active.has(e.projectId)).map(toNotifyEvent)
        const messages = planMessages(events, rules, deps.siteUrl, cache)
        if (messages.length > 0 && (await deps.outbox.enqueue(messages)) > 0) deps.onEnqueued?.()
        if (messages.length > 0) crashPoint('notify.after-enqueue')
      }
      return batch.map((e) => ok(e))
    },
  }
}

function toNotifyEvent(e: StoredEvent): NotifyEvent {
  return {
    uuid: e.uuid,
    projectId: e.projectId,
    event: e.event,
    distinctId: e.distinctId,
    timestamp: e.timestamp,
    elementsChain: e.elementsChain,
    properties: propertiesOf(e),
    personId: e.personId,
    personProperties: e.personProperties ? (JSON.parse(e.personProperties) as Record<string, unknown>) : {},
  }
}
