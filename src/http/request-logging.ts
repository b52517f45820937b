import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Level, Logger } from 'pino'
import { redactKeys } from '../shared/logger.ts'

export interface RequestLoggingOptions {
  /** Level of a successful request on a public route (capture, decide): they come by the thousand. */
  publicSuccessLevel: Level | 'silent'
}

type Kind = 'private' | 'public' | 'probe'

/** From the raw URL (query string included): a prefix test each, no copy. */
function kindOf(url: string): Kind {
  if (url.startsWith('/api/') || url.startsWith('/flags/definitions')) return 'private'
  if (url.startsWith('/_health') || url.startsWith('/_ready') || url.startsWith('/_metrics')) return 'probe'
  return 'public'
}

/**
 * One log line per request, with its request id (`reqId`, from `X-Request-Id` when the client sent one,
 * echoed in the response): every private-API request at info, errors of the public routes always (4xx at
 * info, 5xx at error), their successes at `publicSuccessLevel`, probes at debug. Never a body, so never
 * an event's properties; public routes are logged without their query string (`?data=` carries events),
 * private URLs with API keys redacted. The hooks take callbacks (no promise per request), and a request
 * whose line is below the log level costs a prefix test and a level check, nothing more.
 */
export function installRequestLogging(app: FastifyInstance, opts: RequestLoggingOptions): void {
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id)
    done()
  })
  app.addHook('onResponse', (req, reply, done) => {
    const status = reply.statusCode
    const kind = kindOf(req.url)
    const level: Level | 'silent' =
      status >= 500 ? 'error'
      : status >= 400 && kind !== 'probe' ? 'info'
      : kind === 'private' ? 'info'
      : kind === 'probe' ? 'debug'
      : opts.publicSuccessLevel
    if (level !== 'silent' && (req.log as unknown as Logger).isLevelEnabled(level)) {
      const url = kind === 'private' ? redactKeys(req.url) : pathOf(req)
      req.log[level]({ method: req.method, url, status, ms: Math.round(reply.elapsedTime * 10) / 10, ip: req.ip }, 'request')
    }
    done()
  })
}

function pathOf(req: FastifyRequest): string {
  const q = req.url.indexOf('?')
  return redactKeys(q === -1 ? req.url : req.url.slice(0, q))
}
