import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { validationError } from '../../shared/errors.ts'
import { EXPORT_FORMATS, isExportFormat } from './event-export-formats.ts'
import type { EventExportService } from './event-export-service.ts'
import { readEventFilters } from './event-routes.ts'

const FORMATS = [...EXPORT_FORMATS.keys()].join(', ')

/**
 * `GET /api/projects/:project_id/events/export?format=parquet|csv|ndjson` with the events API's
 * filters (`event`, `distinct_id`, `after`, `before`, `properties`): every matching event, oldest
 * first, streamed as it is read (the socket's backpressure paces the engine's query), so memory does
 * not grow with the export. A client that goes away stops the query in the engine. Register inside the
 * private scope (a session or a personal API key of a member of the project).
 */
export async function eventExportRoutes(app: FastifyInstance, opts: { exports: EventExportService }): Promise<void> {
  const handler = async (req: FastifyRequest, reply: import('fastify').FastifyReply) => {
    const raw = (req.query as Record<string, unknown>).format ?? 'ndjson'
    if (typeof raw !== 'string' || !isExportFormat(raw)) throw validationError('format', `format must be one of ${FORMATS}.`)
    const filters = readEventFilters(req)
    const aborted = new AbortController()
    const bytes = opts.exports.export(filters, raw, aborted.signal)
    // The response closing before its end (the client left, or a socket error) stops the export.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) aborted.abort(new Error('client went away'))
    })
    // The first piece is awaited here, so a store that fails at once still answers with an error
    // status rather than a 200 cut short.
    const first = await bytes.next()
    const { contentType, extension } = EXPORT_FORMATS.get(raw)!
    const stream = Readable.from(
      (async function* () {
        if (!first.done) yield first.value
        yield* bytes
      })(),
      { objectMode: false },
    )
    return reply
      .header('content-type', contentType)
      .header('content-disposition', `attachment; filename="events-${filters.projectId}.${extension}"`)
      .header('cache-control', 'no-store')
      .send(stream)
  }
  for (const url of ['/api/projects/:project_id/events/export', '/api/projects/:project_id/events/export/']) app.get(url, handler)
}
