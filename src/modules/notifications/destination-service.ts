import { AppError } from '../../shared/errors.ts'
import type { Page } from '../../shared/page.ts'
import type { Project } from '../projects/project-types.ts'
import type { DestinationStore } from './destination-store.ts'
import type { Destination, DestinationInput } from './destination-types.ts'
import type { OutboxDelivery, OutboxStore } from './outbox-store.ts'
import { planMessages } from './plan-messages.ts'
import type { WebhookClient } from './webhook-client.ts'

const notFound = () => new AppError('not_found', 'Not found.')

export interface TestSend {
  status: number | null
  error: string | null
  body: string
}

/**
 * Webhook destinations: CRUD (soft delete), a test send of a sample event through the same body
 * template and address checks as real deliveries, the latest deliveries, and the replay of those
 * dead-lettered.
 */
export function createDestinationService(deps: { store: DestinationStore; outbox: OutboxStore; client: WebhookClient; siteUrl: string }) {
  const { store } = deps
  const get = async (project: Project, id: number) => (await store.find(project.id, id)) ?? Promise.reject(notFound())
  return {
    list: (project: Project, page: Page) => store.list(project.id, page),
    get,
    create: (project: Project, input: DestinationInput) =>
      store.insert(project.id, {
        name: input.name!,
        url: input.url!,
        enabled: input.enabled ?? true,
        headers: input.headers ?? {},
        filters: input.filters ?? {},
        bodyTemplate: input.bodyTemplate ?? null,
      }),
    async update(project: Project, id: number, input: DestinationInput): Promise<Destination> {
      return (await store.update(project.id, id, input)) ?? Promise.reject(notFound())
    },
    async remove(project: Project, id: number): Promise<void> {
      if (!(await store.update(project.id, id, { deleted: true }))) throw notFound()
    },
    /** Sends one sample event to the destination now and says how it went (not through the outbox). */
    async testSend(project: Project, id: number): Promise<TestSend> {
      const d = await get(project, id)
      const [message] = planMessages(
        [{ uuid: '00000000-0000-0000-0000-000000000000', projectId: project.id, event: 'test event', distinctId: 'test-distinct-id', timestamp: new Date(), elementsChain: '', properties: { $current_url: `${deps.siteUrl}/`, test: true }, personId: null, personProperties: { email: 'test@example.com' } }],
        [{ projectId: project.id, projectName: project.name, chatWebhook: null, actions: [], destinations: [{ ...d, filters: {} }] }],
        deps.siteUrl,
        new Map(),
      )
      try {
        const res = await deps.client.post(d.url, message!.body, { ...d.headers, 'idempotency-key': `test:${Date.now()}` })
        return { status: res.status, error: res.status >= 200 && res.status < 300 ? null : `answered ${res.status}`, body: message!.body }
      } catch (err) {
        return { status: null, error: (err as Error).message, body: message!.body }
      }
    },
    async deliveries(project: Project, id: number, limit: number): Promise<OutboxDelivery[]> {
      await get(project, id)
      return deps.outbox.recent(project.id, `destination:${id}`, limit)
    },
    async replayFailed(project: Project, id: number): Promise<number> {
      await get(project, id)
      return deps.outbox.replayFailed(project.id, `destination:${id}`)
    },
  }
}

export type DestinationService = ReturnType<typeof createDestinationService>
