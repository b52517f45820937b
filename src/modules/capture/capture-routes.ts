import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { bearerToken, publicBodyInput } from '../../http/public-body.ts'
import { answerOptions, installPublicScope } from '../../http/public-scope.ts'
import type { CaptureService } from './capture-service.ts'
import { createDecodePool } from './decode-pool.ts'
import { crashPoint } from '../../shared/crash-points.ts'

/** Every capture path PostHog serves (Django `urls.py`, Rust `router.rs`), each with and without '/'. */
export const CAPTURE_PATHS = ['/e', '/i/v0/e', '/capture', '/batch', '/track', '/engage'] as const

export interface CaptureRoutesOptions {
  capture: CaptureService
  /** Bound on the raw body (checked while it streams in) and on it once decompressed. */
  maxBodyBytes: number
  /**
   * Capture decode threads (0: every body decoded on the event loop) and the body size from which a
   * request goes to one (smaller ones cost less inline than the hand-over).
   */
  decode?: { threads: number; minBytes: number }
}

/**
 * The capture routes (register inside the public scope): GET (`?data=`) and POST answer 200
 * `{"status": 1}` once the events are durable; OPTIONS answers 200 with CORS headers.
 */
export async function captureRoutes(app: FastifyInstance, opts: CaptureRoutesOptions): Promise<void> {
  installPublicScope(app, { maxBodyBytes: opts.maxBodyBytes })
  if (opts.decode && opts.decode.threads > 0) {
    const pool = createDecodePool({ threads: opts.decode.threads, logger: app.log })
    opts.capture.setOffload({ minBytes: opts.decode.minBytes, run: pool.run })
    app.addHook('onClose', async () => {
      opts.capture.setOffload(null)
      await pool.close()
    })
  }
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const nowMs = Date.now()
    await opts.capture.capture({
      body: publicBodyInput(req, opts.maxBodyBytes),
      isEngage: req.url.startsWith('/engage'),
      bearer: bearerToken(req),
      ip: req.ip ?? null,
      nowMs,
    })
    crashPoint('capture.after-publish')
    return reply.send({ status: 1 })
  }
  for (const path of CAPTURE_PATHS) {
    for (const url of [path, `${path}/`]) {
      app.route({ method: ['GET', 'POST'], url, handler })
      app.route({ method: 'OPTIONS', url, handler: answerOptions })
    }
  }
}
