import { createWriteStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Config } from '../config/load-config.ts'
import { createAdapters } from '../app/create-adapters.ts'
import { createServices } from '../app/create-services.ts'
import { createLogger } from '../shared/logger.ts'
import { AppError } from '../shared/errors.ts'
import { EXPORT_FORMATS, isExportFormat } from '../modules/events/event-export-formats.ts'
import { readBound } from '../modules/events/event-routes.ts'

export interface ExportEventsOptions {
  project?: string
  from?: string
  to?: string
  format?: string
  out?: string
}

const USAGE = `Usage: tally export-events --project N --format ${[...EXPORT_FORMATS.keys()].join('|')} --out FILE [--from DATE] [--to DATE]
  events of project N with from <= timestamp < to, oldest first (dates as capture takes them, e.g. 2024-05-01)`

/**
 * `tally export-events`: a project's events into a Parquet, CSV or NDJSON file, written as the event
 * engine streams them (the same export as `GET /api/projects/:id/events/export`). Embedded, it opens
 * the data dir itself: stop the server first (DuckDB takes one process), or use the API while it runs.
 * At scale it reads ClickHouse beside the running servers. Ctrl-C stops the engine's query and removes
 * the partial file.
 */
export async function exportEventsCommand(config: Config, opts: ExportEventsOptions): Promise<number> {
  const projectId = Number(opts.project)
  if (!opts.project || !Number.isSafeInteger(projectId) || !opts.out || !opts.format) {
    console.error(USAGE)
    return 2
  }
  if (!isExportFormat(opts.format)) {
    console.error(`--format must be one of ${[...EXPORT_FORMATS.keys()].join(', ')}`)
    return 2
  }
  let from: string | undefined
  let before: string | undefined
  try {
    from = opts.from === undefined ? undefined : readBound(opts.from, 'from')
    before = opts.to === undefined ? undefined : readBound(opts.to, 'to')
  } catch (err) {
    console.error(err instanceof AppError ? `--${err.attr ?? "date"}: ${err.message}` : String(err))
    return 2
  }
  const stores = await createAdapters(config, { queue: false })
  const aborted = new AbortController()
  const stop = () => aborted.abort(new Error('interrupted'))
  process.once('SIGINT', stop)
  try {
    const services = createServices(stores, createLogger({ level: config.log.level, pretty: false }))
    if (!(await services.projects.listProjects()).some((p) => p.id === projectId)) {
      console.error(`no project ${projectId} in this data dir (tally keys lists them)`)
      return 1
    }
    const bytes = services.eventExports.export({ projectId, from, before, properties: [] }, opts.format, aborted.signal)
    try {
      await pipeline(Readable.from(bytes), createWriteStream(opts.out), { signal: aborted.signal })
    } catch (err) {
      await rm(opts.out, { force: true })
      throw err
    }
    console.log(`${services.eventExports.stats().rows} event(s) of project ${projectId} written to ${opts.out}`)
    return 0
  } finally {
    process.off('SIGINT', stop)
    await stores.close()
  }
}
