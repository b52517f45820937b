import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../shared/errors.ts'

export interface SdkAssetOptions {
  /** posthog-js's `dist/` folder: its browser scripts are what `/static/` serves. */
  dir: string
  /** The posthog-js version in that folder. */
  version: string
}

const FILE = /^[a-z0-9][a-z0-9.-]*\.js$/

/**
 * What `/static/toolbar.js` answers: Tally does not offer PostHog's toolbar (an app of PostHog's
 * own front end). posthog-js's `loadToolbar()` loads this script, then calls `ph_load_toolbar`;
 * it says so in the console (a warning, not an error) and forgets the saved toolbar parameters
 * (`_postHogToolbarParams`), so the SDK does not try again on every page.
 */
export const TOOLBAR_SCRIPT = Buffer.from(
  '(function(){window.ph_load_toolbar=function(){' +
    "try{window.localStorage.removeItem('_postHogToolbarParams')}catch(e){}" +
    "console.warn('[Tally] The PostHog toolbar is not available on this server.')};})();\n",
)

type Encoding = 'br' | 'gzip' | 'identity'

const brotli = promisify(brotliCompress)
const gzipAsync = promisify(gzip)

/** Brotli quality 9: within 8% of quality 11 for posthog-js's scripts, at a tenth of its CPU time. */
function compress(body: Buffer, encoding: Exclude<Encoding, 'identity'>): Promise<Buffer> {
  if (encoding === 'gzip') return gzipAsync(body, { level: 9 })
  return brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
}

/** The best encoding the client accepts (`br`, then `gzip`), honouring `q=0`. */
export function pickEncoding(acceptEncoding: string | undefined): Encoding {
  if (!acceptEncoding) return 'identity'
  const accepted = new Map<string, number>()
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';')
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean)
    accepted.set(name.trim(), q ? Number(q[1]) : 1)
  }
  const ok = (name: string) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0
  if (ok('br')) return 'br'
  if (ok('gzip')) return 'gzip'
  return 'identity'
}

/**
 * `GET /static/<name>.js` and `/static/<version>/<name>.js`: posthog-js's own lazy extensions
 * (`surveys.js`, `recorder.js`, `dead-clicks-autocapture.js`, the snippet's `array.js`...) from the
 * package Tally depends on, as PostHog serves them at `<api_host>/static/`. posthog-js asks for
 * `/static/<name>.js?v=<version>`, or for the versioned path with `strict_script_versioning`. Only
 * the one installed version exists here: a versioned path of another version gets it too (as a
 * self-hosted PostHog does), never a 404 that would leave the SDK without its extension. Files are
 * listed once, read and compressed (brotli or gzip, as the client accepts) once each, on first use;
 * any other name is a 404, with CORS headers so the browser reports it.
 */
export async function sdkAssetRoutes(app: FastifyInstance, opts: SdkAssetOptions): Promise<void> {
  const names = new Set((await readdir(opts.dir)).filter((f) => FILE.test(f)))
  // One promise per file and encoding: concurrent first requests share one read and one compression.
  const cache = new Map<string, Promise<Buffer>>()
  const bodyOf = (name: string, encoding: Encoding): Promise<Buffer> => {
    const key = `${encoding}:${name}`
    let body = cache.get(key)
    if (!body) {
      body = encoding === 'identity'
        ? (name === 'toolbar.js' ? Promise.resolve(TOOLBAR_SCRIPT) : readFile(path.join(opts.dir, name)))
        : bodyOf(name, 'identity').then((plain) => compress(plain, encoding))
      body.catch(() => cache.delete(key))
      cache.set(key, body)
    }
    return body
  }
  const send = async (req: FastifyRequest, reply: FastifyReply, name: string, versioned: boolean) => {
    reply.header('Access-Control-Allow-Origin', '*')
    const isToolbar = name === 'toolbar.js' && !names.has(name)
    if (!names.has(name) && !isToolbar) throw new AppError('not_found', 'Not found.')
    const encoding = pickEncoding(req.headers['accept-encoding'])
    const body = await bodyOf(name, encoding)
    if (encoding !== 'identity') reply.header('Content-Encoding', encoding)
    // posthog-js asks for the toolbar with a 5-minute `t=` bucket; the scripts change with the package.
    const cacheControl = isToolbar ? 'public, max-age=300' : versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=3600'
    return reply
      .header('Cache-Control', cacheControl)
      .header('Vary', 'Accept-Encoding')
      .header('X-PostHog-JS-Version', opts.version)
      .type('application/javascript; charset=utf-8')
      .send(body)
  }
  app.get<{ Params: { name: string } }>('/static/:name', async (req, reply) => send(req, reply, req.params.name, false))
  app.get<{ Params: { version: string; name: string } }>('/static/:version/:name', async (req, reply) => send(req, reply, req.params.name, true))
  app.options('/static/*', async (_req, reply) =>
    reply.header('Access-Control-Allow-Origin', '*').header('Access-Control-Allow-Methods', 'GET, OPTIONS').code(204).send(),
  )
}
