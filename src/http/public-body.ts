import type { FastifyRequest } from 'fastify'
import { decodeCaptureBody, type CaptureBodyInput, type DecodedCaptureBody } from '../domain/events/index.ts'

/**
 * Decodes a public endpoint's body (capture, batch, decide) however the SDK packed it: JSON, gzip
 * (header, query hint or magic bytes), lz64, base64, form `data=`, or GET `?data=`. The raw body is a
 * Buffer from the public scope's parser; `maxDecodedBytes` bounds the decompressed size.
 * Throws AppError('invalid_payload' | 'payload_too_large').
 */
export function decodePublicBody(req: FastifyRequest, maxDecodedBytes: number): DecodedCaptureBody {
  return decodeCaptureBody(publicBodyInput(req, maxDecodedBytes))
}

/** What decodeCaptureBody reads of a request (plain data: capture may decode it in another thread). */
export function publicBodyInput(req: FastifyRequest, maxDecodedBytes: number): CaptureBodyInput {
  return {
    body: Buffer.isBuffer(req.body) ? req.body : null,
    contentType: req.headers['content-type'] ?? null,
    contentEncoding: header(req, 'content-encoding'),
    query: queryOf(req),
    method: req.method,
    maxBytes: maxDecodedBytes,
  }
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

function header(req: FastifyRequest, name: string): string | null {
  const v = req.headers[name]
  return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] ?? null) : null
}
