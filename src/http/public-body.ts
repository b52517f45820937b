import type { FastifyRequest } from 'fastify'
import { decodeCaptureBody, type DecodedCaptureBody } from '../domain/events/index.ts'

/**
 * Decodes a public endpoint's body (capture, batch, decide) however the SDK packed it: JSON, gzip
 * (header, query hint or magic bytes), lz64, base64, form `data=`, or GET `?data=`. The raw body is a
 * Buffer from the public scope's parser; `maxDecodedBytes` bounds the decompressed size.
 * Throws AppError('invalid_payload' | 'payload_too_large').
 */
export function decodePublicBody(req: FastifyRequest, maxDecodedBytes: number): DecodedCaptureBody {
  return decodeCaptureBody({
    body: Buffer.isBuffer(req.body) ? req.body : null,
    contentType: req.headers['content-type'] ?? null,
    contentEncoding: header(req, 'content-encoding'),
    query: queryOf(req),
    method: req.method,
    maxBytes: maxDecodedBytes,
  })
}

export function queryOf(req: FastifyRequest): Record<string, unknown> {
  return (req.query as Record<string, unknown> | undefined) ?? {}
}

/** The token of an `Authorization: Bearer <token>` header (capture v1 style), or null. */
export function bearerToken(req: FastifyRequest): string | null {
  const value = req.headers.authorization
  const m = typeof value === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(value) : null
  return m ? m[1]! : null
}

/**
 * The project key of a single-object public request (decide/flags): GET query `token`/`api_key`,
 * form `api_key`/`token`, body `$token`/`token`/`api_key`/`properties.token`, query, then a Bearer
 * header. Capture uses extractEvents, which also checks that a batch's events agree.
 */
export function findPublicToken(req: FastifyRequest, decoded: DecodedCaptureBody): string | null {
  const q = queryOf(req)
  const pick = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null)
  const fromQuery = () => pick(q.token) ?? pick(q.api_key)
  if (req.method === 'GET' && fromQuery()) return fromQuery()
  const form = decoded.form
  const body = decoded.payload
  const obj = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : null
  const props = obj && typeof obj.properties === 'object' && obj.properties !== null ? (obj.properties as Record<string, unknown>) : null
  return (
    pick(form.api_key) ??
    pick(form.token) ??
    pick(obj?.$token) ??
    pick(obj?.token) ??
    pick(obj?.api_key) ??
    pick(props?.token) ??
    fromQuery() ??
    bearerToken(req)
  )
}

function header(req: FastifyRequest, name: string): string | null {
  const v = req.headers[name]
  return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] ?? null) : null
}
