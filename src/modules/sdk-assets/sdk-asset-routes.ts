import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { AppError } from '../../shared/errors.ts'

export interface SdkAssetOptions {
  /** posthog-js's `dist/` folder: its browser scripts are what `/static/` serves. */
  dir: string
  /** The posthog-js version in that folder. */
  version: string
}

const FILE = /^[a-z0-9][a-z0-9.-]*\.js$/

/**
 * `GET /static/<name>.js` and `/static/<version>/<name>.js`: posthog-js's own lazy extensions
 * (`surveys.js`, `recorder.js`, `dead-clicks-autocapture.js`, the snippet's `array.js`...) from the
 * package Tally depends on, as PostHog serves them at `<api_host>/static/`. posthog-js asks for
 * `/static/<name>.js?v=<version>`, or for the versioned path with `strict_script_versioning`. Only
 * the one installed version exists here: a versioned path of another version gets it too (as a
 * self-hosted PostHog does), never a 404 that would leave the SDK without its extension. Files are
 * listed once and read once; any other name is a 404, with CORS headers so the browser reports it.
 */
export async function sdkAssetRoutes(app: FastifyInstance, opts: SdkAssetOptions): Promise<void> {
  const names = new Set((await readdir(opts.dir)).filter((f) => FILE.test(f)))
  const cache = new Map<string, Buffer>()
  const send = async (reply: FastifyReply, name: string, versioned: boolean) => {
    reply.header('Access-Control-Allow-Origin', '*')
    if (!names.has(name)) throw new AppError('not_found', 'Not found.')
    let body = cache.get(name)
    if (!body) {
      body = await readFile(path.join(opts.dir, name))
      cache.set(name, body)
    }
    return reply
      .header('Cache-Control', versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=3600')
      .header('X-PostHog-JS-Version', opts.version)
      .type('application/javascript; charset=utf-8')
      .send(body)
  }
  app.get<{ Params: { name: string } }>('/static/:name', async (req, reply) => send(reply, req.params.name, false))
  app.get<{ Params: { version: string; name: string } }>('/static/:version/:name', async (req, reply) => send(reply, req.params.name, true))
  app.options('/static/*', async (_req, reply) =>
    reply.header('Access-Control-Allow-Origin', '*').header('Access-Control-Allow-Methods', 'GET, OPTIONS').code(204).send(),
  )
}
