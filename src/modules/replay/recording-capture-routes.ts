import type { FastifyInstance, FastifyRequest } from 'fastify'
import { bearerToken, publicBodyInput } from '../../http/public-body.ts'
import { answerOptions, installPublicScope } from '../../http/public-scope.ts'
import { ByteBudget } from '../../shared/byte-budget.ts'
import type { RecordingCaptureService } from './recording-capture-service.ts'

export interface RecordingCaptureRoutesOptions {
  capture: RecordingCaptureService
  /** Largest raw body (PostHog: 25 MiB on `/s/`); checked while it streams in. */
  maxBodyBytes: number
  /** Largest decompressed body. */
  maxDecodedBytes: number
  /** Raw body bytes read and decoded at once; later requests wait with their bodies unread. */
  memoryBudgetBytes: number
}

const HELD = Symbol('replayBudgetBytes')
type WithHeld = FastifyRequest & { [HELD]?: number }

/**
 * `/s` and `/s/` (register inside the public scope): POST (or GET `?data=`) answers 200
 * `{"status": 1}` once the snapshots are durable, OPTIONS 200 with CORS headers. A body is read
 * only once the memory budget has room for it (its Content-Length, or the whole bound when
 * chunked), so many large uploads at once wait in their sockets rather than in memory.
 */
export async function recordingCaptureRoutes(app: FastifyInstance, opts: RecordingCaptureRoutesOptions): Promise<void> {
  installPublicScope(app, { maxBodyBytes: opts.maxBodyBytes })
  const budget = new ByteBudget(opts.memoryBudgetBytes)
  const release = (req: WithHeld) => {
    const held = req[HELD]
    if (held === undefined) return
    delete req[HELD]
    budget.release(held)
  }
  app.addHook('preParsing', async (req: WithHeld, _reply, payload) => {
    const length = req.headers['content-length']
    const chunked = req.headers['transfer-encoding'] !== undefined
    const cost = length !== undefined ? Math.min(Number(length) || 0, opts.maxBodyBytes) : chunked ? opts.maxBodyBytes : 0
    await budget.acquire(cost)
    req[HELD] = cost
    return payload
  })
  app.addHook('onResponse', async (req: WithHeld) => release(req))
  app.addHook('onRequestAbort', async (req: WithHeld) => release(req))

  const handler = async (req: FastifyRequest) => {
    await opts.capture.capture({ body: publicBodyInput(req, opts.maxDecodedBytes), bearer: bearerToken(req) })
    return { status: 1 }
  }
  for (const url of ['/s', '/s/']) {
    app.route({ method: ['GET', 'POST'], url, handler })
    app.route({ method: 'OPTIONS', url, handler: answerOptions })
  }
}
