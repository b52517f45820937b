import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

// Request headers a browser may send to the public endpoints (PostHog `posthog/utils_cors.py`).
const ALLOWED_HEADERS = new Set(
  [
    'traceparent', 'request-id', 'request-context', 'x-amzn-trace-id', 'x-cloud-trace-context', 'sentry-trace',
    'baggage', 'x-highlight-request', 'x-datadome-clientid', 'x-posthog-token', 'x-b3-sampled', 'x-b3-spanid',
    'x-b3-traceid', 'x-b3-parentspanid', 'b3',
  ],
)

/**
 * Sets PostHog's CORS headers (Django `cors_response`) when the request has an `Origin`: the
 * origin's `scheme://host` (or `*` when it has none, e.g. `null`), credentials allowed, GET/POST/
 * OPTIONS, and `X-Requested-With,Content-Type` plus the allow-listed headers the browser asked for.
 */
export function setCorsHeaders(req: FastifyRequest, reply: FastifyReply): void {
  const origin = req.headers.origin
  if (!origin) return
  let allowOrigin = '*'
  try {
    const url = new URL(origin)
    if (url.host) allowOrigin = `${url.protocol}//${url.host}`
  } catch {
    // Not a URL (e.g. "null"): answer `*`, as Django does for an origin without netloc.
  }
  let allowHeaders = 'X-Requested-With,Content-Type'
  const requested = req.headers['access-control-request-headers']
  if (typeof requested === 'string') {
    for (const h of requested.split(',')) if (ALLOWED_HEADERS.has(h.toLowerCase())) allowHeaders += `,${h}`
  }
  reply.headers({
    'access-control-allow-origin': allowOrigin,
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'GET, POST, OPTIONS',
    'access-control-allow-headers': allowHeaders,
    vary: 'Origin',
  })
}

// First path segments of the routes browsers call from other sites: capture (`/e`, `/i/v0/e`,
// `/capture`, `/batch`, `/track`, `/engage`), replay (`/s`), flags (`/decide`, `/flags`), remote
// config (`/array`) and posthog-js's scripts (`/static`); plus the surveys read (`/api/surveys`).
const PUBLIC_SEGMENTS = new Set(['e', 'i', 's', 'capture', 'batch', 'track', 'engage', 'decide', 'flags', 'array', 'static'])
const PUBLIC_API = /^\/api\/surveys(?:[/?]|$)/

/**
 * True for a URL under one of the public (browser-facing) routes, known or not: their error answers,
 * 404s of unknown sub-paths included, carry CORS headers so a page sees the status, not a network error.
 */
export function isPublicPath(url: string): boolean {
  if (PUBLIC_API.test(url)) return true
  const m = /^\/+([^/?#]*)/.exec(url)
  return m !== null && PUBLIC_SEGMENTS.has(m[1])
}

/**
 * Prepares the public scope (capture, decide): bodies arrive as raw Buffers whatever their
 * content type, limited to `maxBodyBytes` while they stream in (Fastify answers 413 as soon as
 * the limit is passed, or at once from Content-Length), and every answer carries CORS headers.
 */
export function installPublicScope(scope: FastifyInstance, opts: { maxBodyBytes: number }): void {
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: opts.maxBodyBytes }, (_req, body, done) => {
    done(null, body)
  })
  scope.addHook('onRequest', async (req, reply) => {
    setCorsHeaders(req, reply)
  })
}

/** PostHog answers OPTIONS on its public endpoints with 200 `{"status": 1}` (CORS headers set above). */
export async function answerOptions(): Promise<{ status: 1 }> {
  return { status: 1 }
}
