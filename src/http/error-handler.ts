import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../shared/errors.ts'
import { classifyFailure } from '../shared/classify-failure.ts'
import { ERROR_TABLE, type WireError } from './error-table.ts'
import { isPublicPath, setCorsHeaders } from './public-scope.ts'

/** Turns any thrown value into `{status, body}` in PostHog's error shape. */
export function toWireError(err: unknown): { status: number; body: WireError } {
  if (err instanceof AppError) {
    const row = ERROR_TABLE[err.code]
    const subCode = typeof err.extra?.subCode === 'string' ? err.extra.subCode : row.wireCode
    return { status: row.status, body: { type: row.type, code: subCode, detail: err.message, attr: err.attr } }
  }
  if (classifyFailure(err) === 'transient') {
    // A store or disk that does not answer now (closed, refused, out of space): the client may retry.
    const row = ERROR_TABLE.service_unavailable
    const detail = 'A store Tally needs is unavailable; try again shortly.'
    return { status: row.status, body: { type: row.type, code: row.wireCode, detail, attr: null } }
  }
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    // Only a request nested beyond every limit gets here (bodies are depth-checked first): the
    // client's input, not a server fault.
    const detail = 'Request nested too deeply.'
    return { status: 400, body: { type: 'validation_error', code: 'invalid_input', detail, attr: null } }
  }
  const fe = err as FastifyError
  if (fe && Array.isArray(fe.validation)) {
    const first = fe.validation[0]
    return { status: 400, body: { type: 'validation_error', code: 'invalid_input', detail: fe.message, attr: attrOf(first) } }
  }
  if (fe?.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe?.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || fe instanceof SyntaxError) {
    return { status: 400, body: { type: 'validation_error', code: 'parse_error', detail: `JSON parse error - ${fe.message}`, attr: null } }
  }
  if (fe?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return { status: 413, body: { type: 'client_error', code: 'request_too_large', detail: 'Request too large.', attr: null } }
  }
  if (fe?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return { status: 415, body: { type: 'invalid_request', code: 'unsupported_media_type', detail: fe.message, attr: null } }
  }
  if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: fe.statusCode, body: { type: 'invalid_request', code: 'invalid_request', detail: fe.message, attr: null } }
  }
  return { status: 500, body: { type: 'server_error', code: 'server_error', detail: 'A server error occurred.', attr: null } }
}

function attrOf(v: { instancePath?: string; params?: Record<string, unknown> } | undefined): string | null {
  if (!v) return null
  const path = (v.instancePath ?? '').split('/').filter(Boolean)
  const missing = v.params?.missingProperty
  if (typeof missing === 'string') path.push(missing)
  return path.length ? path.join('__') : null
}

/** A public route's error answer carries CORS headers (whether the route exists or not), so the page sees it. */
export function setPublicErrorCors(req: FastifyRequest, reply: FastifyReply): void {
  if (isPublicPath(req.url) && !reply.hasHeader('access-control-allow-origin')) setCorsHeaders(req, reply)
}

/** Installs the error and not-found handlers on a Fastify instance. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const { status, body } = toWireError(err)
    setPublicErrorCors(req, reply)
    // A 503 of the queue is logged once per change of state by the queue; a store outage on any
    // other route is logged here, with the error.
    if (status >= 500 && !(err instanceof AppError && err.code === 'service_unavailable')) req.log.error({ err }, 'request failed')
    else if (err instanceof RangeError) req.log.warn({ err }, 'request nested too deeply')
    if (status === 405) return reply.code(405).send()
    if (status === 401 && body.code === 'not_authenticated') reply.header('WWW-Authenticate', 'Bearer')
    if (err instanceof AppError && typeof err.extra?.retryAfterSeconds === 'number') reply.header('Retry-After', String(err.extra.retryAfterSeconds))
    else if (status === 503) reply.header('Retry-After', '5')
    return reply.code(status).send(body)
  })
  app.setNotFoundHandler((req, reply) => {
    setPublicErrorCors(req, reply)
    reply.code(404).send({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
  })
}
