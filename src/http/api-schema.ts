import type { FastifyInstance } from 'fastify'

/** One registered route, as the API description lists it. */
export interface ApiRoute {
  method: string
  url: string
}

/** Routes that never need a key or a session: sign-in and sign-up, and the description itself. */
const OPEN_PRIVATE_PATHS = ['/api/login/', '/api/logout/', '/api/setup/', '/api/signup/', '/api/signup/invite/', '/api/schema/']
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * Records every route registered on `app` after this call (an `onRoute` hook sees those of every
 * plugin): the list `/api/schema/` describes. Call it before registering routes.
 */
export function collectApiRoutes(app: FastifyInstance): ApiRoute[] {
  const routes: ApiRoute[] = []
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) if (METHODS.has(method)) routes.push({ method, url: r.url })
  })
  return routes
}

/** `/api/projects/:project_id/x/` -> `/api/projects/{project_id}/x/`, and its path parameters. */
function openApiPath(url: string): { path: string; params: string[] } {
  const params: string[] = []
  const path = url.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    params.push(name)
    return `{${name}}`
  }).replace(/\*$/, '{path}')
  if (url.endsWith('*')) params.push('path')
  return { path, params }
}

/** The resource a path belongs to: the segment after the project (`feature_flags`), else after `/api/`. */
function tagOf(path: string): string {
  const m = /^\/api\/(?:projects|environments)\/\{project_id\}\/([^/]+)/.exec(path) ?? /^\/api\/([^/{]+)/.exec(path)
  return m ? m[1] : 'ingestion'
}

/**
 * An OpenAPI 3.1 document of the routes (the paths, methods, path parameters and authentication;
 * request and response bodies are PostHog's, described in docs/ and typed in http/wire-types.ts).
 */
export function buildApiSchema(routes: readonly ApiRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of routes) {
    if (!r.url.startsWith('/api/') && !/^\/(decide|flags|capture|batch|e|i\/v0\/e|track|engage)\b/.test(r.url)) continue
    // Paths registered with and without the trailing slash are one operation (the slash form is listed).
    if (r.url.startsWith('/api/') && !r.url.endsWith('/') && !r.url.endsWith('*') && routes.some((o) => o.method === r.method && o.url === `${r.url}/`)) continue
    const { path, params } = openApiPath(r.url)
    const isPrivate = r.url.startsWith('/api/') && !OPEN_PRIVATE_PATHS.includes(r.url)
    paths[path] ??= {}
    paths[path][r.method.toLowerCase()] = {
      tags: [tagOf(path)],
      operationId: `${r.method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      parameters: params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
      security: isPrivate ? [{ PersonalAPIKeyAuth: [] }, { SessionAuth: [], CSRFToken: [] }] : [],
      responses: { default: { description: 'PostHog-compatible JSON; errors as {type, code, detail, attr}' } },
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Tally API', version: '1', description: "PostHog's API as Tally serves it." },
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      securitySchemes: {
        PersonalAPIKeyAuth: { type: 'http', scheme: 'bearer', description: 'A personal API key (phx_...)' },
        SessionAuth: { type: 'apiKey', in: 'cookie', name: 'tally_session' },
        CSRFToken: { type: 'apiKey', in: 'header', name: 'X-CSRFToken', description: 'The tally_csrftoken cookie, on state-changing requests with a session' },
      },
    },
  }
}

/** `GET /api/schema/`: the description of every route registered, built once on first request. */
export async function apiSchemaRoutes(app: FastifyInstance, opts: { routes: readonly ApiRoute[] }): Promise<void> {
  let schema: ReturnType<typeof buildApiSchema> | null = null
  app.get('/api/schema/', async () => (schema ??= buildApiSchema(opts.routes)))
}
