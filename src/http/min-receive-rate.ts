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

/**
 * A minimum receive rate for request bodies (Apache's mod_reqtimeout `MinRate`, nginx's
 * `client_body_timeout` per read): while a body is arriving, the bytes the socket read are compared,
 * once per window, with `bytesPerSecond × window`; a body slower than that for a whole window is
 * answered 408 in PostHog's error shape (`request_timeout`) and its connection closed. A body trickled
 * one byte every few seconds is cut after one window; a large batch on a slow link that keeps up the
 * rate passes whatever its size (the request timeout bounds it as before).
 *
 * It watches `socket.bytesRead` on a timer and adds no listener to the body stream, which Fastify reads.
 */
export function installMinReceiveRate(server: Server, rate: MinReceiveRate, logger?: Pick<Logger, 'info'>): void {
  if (rate.bytesPerSecond <= 0 || rate.windowMs <= 0) return
  const need = (rate.bytesPerSecond * rate.windowMs) / 1000
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.complete || !hasBody(req)) return
    const socket = req.socket
    let last = socket.bytesRead
    const timer = setInterval(() => {
      if (req.complete || res.writableEnded || socket.destroyed) return stop()
      const now = socket.bytesRead
      if (now - last >= need) {
        last = now
        return
      }
      stop()
      logger?.info({ url: req.url, bytes: now - last, windowMs: rate.windowMs }, 'request body slower than the minimum receive rate: cut')
      if (res.headersSent) return void socket.destroy()
      const { body } = toWireError(new AppError('request_timeout', `The request body arrived slower than ${rate.bytesPerSecond} bytes/s over ${rate.windowMs / 1000} s (TALLY_MIN_RECEIVE_BYTES_PER_SECOND, TALLY_MIN_RECEIVE_WINDOW_MS).`))
      const text = JSON.stringify(body)
      res.writeHead(408, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), connection: 'close' })
      res.end(text, () => socket.destroy())
    }, rate.windowMs)
    timer.unref()
    const stop = () => clearInterval(timer)
    req.once('end', stop)
    res.once('close', stop)
  })
}
