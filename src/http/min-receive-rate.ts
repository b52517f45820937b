import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Logger } from 'pino'
import { AppError } from '../shared/errors.ts'
import { toWireError } from './error-handler.ts'

export interface MinReceiveRate {
  /** Bytes per second a request body must average over each window (0: no minimum). */
  bytesPerSecond: number
  /** The window the rate is averaged over; a body slower than the rate for a whole window is cut. */
  windowMs: number
}

/** Does the request announce a body (a length above 0, or chunked)? */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length']
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined
}

interface Watched {
  req: IncomingMessage
  res: ServerResponse
  /** `socket.bytesRead` at the start of the current window. */
  last: number
  /** When the current window ends (ms, monotonic). */
  due: number
}

/**
 * A minimum receive rate for request bodies (Apache's mod_reqtimeout `MinRate`, nginx's
 * `client_body_timeout` per read): while a body is arriving, the bytes the socket read are compared,
 * once per window, with `bytesPerSecond × window`; a body slower than that for a whole window is
 * answered 408 in PostHog's error shape (`request_timeout`) and its connection closed. A body trickled
 * one byte every few seconds is cut after one window (checked every quarter window, so within 1.25
 * windows); a large batch on a slow link that keeps up the rate passes whatever its size (the request
 * timeout bounds it as before).
 *
 * It watches `socket.bytesRead` from one shared timer and adds no listener to the body stream, which
 * Fastify reads, nor a timer per request: a request costs one Set insertion (profiled on /decide, a
 * timer and two listeners per request were ~1.5 % of its CPU), and finished ones leave at the next tick.
 */
export function installMinReceiveRate(server: Server, rate: MinReceiveRate, logger?: Pick<Logger, 'info'>): void {
  if (rate.bytesPerSecond <= 0 || rate.windowMs <= 0) return
  const need = (rate.bytesPerSecond * rate.windowMs) / 1000
  const watched = new Set<Watched>()
  let timer: NodeJS.Timeout | null = null

  const cut = (w: Watched, bytes: number) => {
    const { req, res } = w
    const socket = req.socket
    logger?.info({ url: req.url, bytes, windowMs: rate.windowMs }, 'request body slower than the minimum receive rate: cut')
    if (res.headersSent) return void socket.destroy()
    const { body } = toWireError(new AppError('request_timeout', `The request body arrived slower than ${rate.bytesPerSecond} bytes/s over ${rate.windowMs / 1000} s (TALLY_MIN_RECEIVE_BYTES_PER_SECOND, TALLY_MIN_RECEIVE_WINDOW_MS).`))
    const text = JSON.stringify(body)
    res.writeHead(408, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), connection: 'close' })
    res.end(text, () => socket.destroy())
  }
  const sweep = () => {
    const now = performance.now()
    for (const w of watched) {
      const socket = w.req.socket
      if (w.req.complete || w.res.writableEnded || socket.destroyed) {
        watched.delete(w)
        continue
      }
      if (now < w.due) continue
      const read = socket.bytesRead
      if (read - w.last >= need) {
        w.last = read
        w.due = now + rate.windowMs
        continue
      }
      watched.delete(w)
      cut(w, read - w.last)
    }
    if (watched.size === 0 && timer !== null) {
      clearInterval(timer)
      timer = null
    }
  }
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.complete || !hasBody(req)) return
    watched.add({ req, res, last: req.socket.bytesRead, due: performance.now() + rate.windowMs })
    if (timer === null) {
      timer = setInterval(sweep, Math.max(10, rate.windowMs / 4))
      timer.unref()
    }
  })
}
