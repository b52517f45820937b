import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../shared/errors.ts'

type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>
type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

/**
 * Registers a route under its canonical path (trailing slash) and the same path without it:
 * PostHog's router makes the trailing slash optional (`trailing_slash = r"/?"`).
 */
export function addRoute(app: FastifyInstance, method: Method, path: string, handler: Handler): void {
  app.route({ method, url: path, handler })
  if (path.endsWith('/')) app.route({ method, url: path.slice(0, -1), handler })
}

/**
 * DRF's format suffix: `?format=json` is always fine, other renderers only where the view has them;
 * an unknown format is a 404, as DRF answers it.
 */
export function readFormat(req: FastifyRequest, allowed: readonly string[] = ['json']): string {
  const format = (req.query as Record<string, unknown> | undefined)?.format
  if (format === undefined) return 'json'
  if (typeof format !== 'string' || !allowed.includes(format)) throw new AppError('not_found', 'Not found.')
  return format
}

/** Hard delete is refused (PostHog's `ForbidDestroyModel`): 405 with an empty body, nothing changes. */
export async function refuseDelete(): Promise<never> {
  throw new AppError('method_not_allowed', 'Method "DELETE" not allowed.')
}
