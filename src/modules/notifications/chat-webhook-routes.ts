import type { FastifyInstance } from 'fastify'
import { readBody } from '../../http/drf-fields.ts'
import { addRoute } from '../../http/route-paths.ts'
import type { WebhookClient } from './webhook-client.ts'
import { readHttpUrl } from '../../http/drf-fields.ts'
import { isSlackWebhook } from '../../domain/notifications/format-action-message.ts'

/**
 * `POST /api/user/test_slack_webhook/` `{webhook}`: sends a greeting to an incoming-webhook URL (the
 * project settings' "send test message"), through the same address checks as every message. Answers
 * as PostHog's view does: `{success: true}`, or `{error}` naming what went wrong.
 */
export async function chatWebhookRoutes(app: FastifyInstance, opts: { client: WebhookClient }) {
  addRoute(app, 'POST', '/api/user/test_slack_webhook/', async (req, reply) => {
    const url = readHttpUrl(readBody(req.body).webhook, 'webhook', { allowNull: true })
    if (url === null) return reply.code(400).send({ error: 'no webhook URL' })
    const text = '_Greetings_ from Tally!'
    const body = isSlackWebhook(url) ? { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] } : { text }
    try {
      const res = await opts.client.post(url, JSON.stringify(body), {})
      if (res.status >= 200 && res.status < 300) return { success: true }
      return reply.code(400).send({ error: `the webhook answered ${res.status}` })
    } catch (err) {
      return reply.code(400).send({ error: (err as Error).message })
    }
  })
}
