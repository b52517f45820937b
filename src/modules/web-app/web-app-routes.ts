import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { AppError } from '../../shared/errors.ts'
import { isPublicPath } from '../../http/public-scope.ts'

export interface WebAppOptions {
  /** The built web app (`index.html` + `assets/`); default `<package root>/dist/web`. */
  dir?: string
}

/**
 * First path segments that belong to the web app's client-side router. Only these fall back to
 * `index.html`: every other unknown path (`/api/...`, `/capture/...`, `/_x`) keeps its JSON 404,
 * so an API client never gets HTML for a typo.
 */
export const WEB_APP_SECTIONS = [
  'login', 'setup', 'signup', 'activity', 'persons', 'groups', 'insights', 'sql', 'dashboards',
  'feature_flags', 'actions', 'cohorts', 'settings', 'replay', 'web', 'sessions',
] as const

/** `<package root>/dist/web`, found from this file whether it runs from `src/` (tsx) or `dist/` (built). */
export function defaultWebAppDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir)
    if (up === dir) break
    dir = up
  }
  return path.join(dir, 'dist', 'web')
}

/**
 * The web app at `/` on the API's own port: hashed files under `/assets/` cached for a year (and
 * sent pre-compressed),
 * `index.html` never cached (so a new build is picked up), and the client-side routes answered
 * with `index.html`. Without a build, those pages say how to make one (503), not a JSON 404.
 */
export async function webAppRoutes(app: FastifyInstance, opts: WebAppOptions): Promise<void> {
  const dir = opts.dir ?? defaultWebAppDir()
  const indexFile = path.join(dir, 'index.html')
  const built = existsSync(indexFile)
  let index: Buffer | null = null
  const sendIndex = (reply: FastifyReply) => {
    if (!built) {
      return reply.code(503).type('text/plain; charset=utf-8')
        .send('The web app is not built. Run `npm run build` (or `npm ci`), then restart Tally.\n')
    }
    index ??= readFileSync(indexFile)
    return reply.header('Cache-Control', 'no-cache').type('text/html; charset=utf-8').send(index)
  }

  if (built && existsSync(path.join(dir, 'assets'))) {
    await app.register(fastifyStatic, {
      root: path.join(dir, 'assets'),
      prefix: '/assets/',
      decorateReply: false,
      wildcard: true,
      cacheControl: false,
      // build-web.mjs writes .br and .gz next to each file; served to browsers that accept them.
      preCompressed: true,
      setHeaders: (reply) => reply.header('Cache-Control', 'public, max-age=31536000, immutable'),
    })
  }
  app.get('/', async (_req, reply) => sendIndex(reply))
  for (const section of WEB_APP_SECTIONS) {
    app.get(`/${section}`, async (_req, reply) => sendIndex(reply))
    app.get(`/${section}/*`, async (_req, reply) => sendIndex(reply))
  }
  // Any other address a browser opens (`/web`, `/surveys`...) gets the app with a 404 status: its
  // not-found page says what exists. API clients, and the API's and SDK's own paths, keep PostHog's JSON 404.
  app.get('/*', async (req, reply) => {
    const wantsPage = /\btext\/html\b/.test(req.headers.accept ?? '')
    if (!wantsPage || /^\/+(?:(?:api|static|assets)(?:[/?]|$)|_|[^/?]*\.[a-z0-9]+(?:\?|$))/i.test(req.url) || isPublicPath(req.url)) {
      throw new AppError('not_found', 'Not found.')
    }
    return sendIndex(reply.code(built ? 404 : 503))
  })
  app.get('/favicon.ico', async (_req, reply) => {
    const file = path.join(dir, 'favicon.svg')
    if (!existsSync(file)) throw new AppError('not_found', 'Not found.')
    return reply.header('Cache-Control', 'public, max-age=86400').type('image/svg+xml').send(readFileSync(file))
  })
}
