import type { Config } from '../config/load-config.ts'
import { createDestinationService } from '../modules/notifications/destination-service.ts'
import { createWebhookClient } from '../modules/notifications/webhook-client.ts'
import type { SqlClient } from '../storage/sql/sql-client.ts'
import { createSqlDestinationStore } from '../storage/sql/sql-destination-store.ts'
import { createSqlNotificationRules } from '../storage/sql/sql-notification-rules.ts'
import { createSqlOutboxStore } from '../storage/sql/sql-outbox-store.ts'

/** Defaults when a caller (a CLI command, a test) builds services without the webhooks' config. */
const DEFAULTS: Config['webhooks'] = {
  siteUrl: null,
  allow: [],
  timeoutMs: 10_000,
  maxAttempts: 8,
  retryMinMs: 1000,
  retryMaxMs: 600_000,
  concurrency: 4,
  ratePerSecond: 50,
  backlogLimit: 100_000,
  leaseMs: 100_000,
  keepSettledMs: 7 * 86_400_000,
}

/**
 * Data that leaves: the outbox (MetaStore), the rules the pipeline plans messages from, webhook
 * destinations, and the one HTTP client every outgoing webhook goes through (its address checks).
 */
export function createNotificationServices(meta: SqlClient, config?: Partial<Pick<Config, 'webhooks' | 'http' | 'storage'>>) {
  const webhooks = config?.webhooks ?? DEFAULTS
  const siteUrl = webhooks.siteUrl ?? `http://${config?.http?.host ?? '127.0.0.1'}:${config?.http?.port ?? 8000}`
  // Embedded (PGlite), one process owns the database and its one sender needs no leases.
  const outbox = createSqlOutboxStore(meta, { leases: config?.storage ? Boolean(config.storage.metadataUrl) : true })
  const webhookClient = createWebhookClient({ allow: webhooks.allow, timeoutMs: webhooks.timeoutMs, connectionsPerOrigin: webhooks.concurrency })
  return {
    webhooks,
    siteUrl,
    outbox,
    webhookClient,
    notificationRules: createSqlNotificationRules(meta),
    destinations: createDestinationService({ store: createSqlDestinationStore(meta), outbox, client: webhookClient, siteUrl }),
  }
}
