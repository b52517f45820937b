import { toSessionRecordingConfig } from '../../domain/replay/recording-settings.ts'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { authenticatePersonal } from '../../http/private-scope.ts'
import { AppError } from '../../shared/errors.ts'
import type { ProjectService } from '../projects/project-service.ts'
import type { Project, User } from '../projects/project-types.ts'
import { remoteConfigFields } from './decide-response.ts'
import type { DecideService } from './decide-service.ts'
import type { DefinitionsCache } from './flag-definitions.ts'

interface DefinitionsOptions {
  decide: DecideService
  projects: ProjectService
  definitions: DefinitionsCache
}

/** Sends the cached definitions body, or 304 when the client's `If-None-Match` is current. */
async function sendDefinitions(req: FastifyRequest, reply: FastifyReply, opts: DefinitionsOptions, project: Project) {
  const state = await opts.decide.state(project.id)
  const sendCohorts = Object.prototype.hasOwnProperty.call(req.query ?? {}, 'send_cohorts')
  const body = opts.definitions.get(state, sendCohorts)
  reply.header('ETag', body.etag).header('Cache-Control', 'no-cache')
  if (req.headers['if-none-match'] === body.etag) return reply.code(304).send()
  return reply.type('application/json').send(body.json)
}

/** The project named by `?token=` that the user is a member of; else `fallback` or the user's current project. */
async function projectOf(req: FastifyRequest, user: User, projects: ProjectService, fallback?: Project): Promise<Project> {
  const token = (req.query as Record<string, unknown>).token
  if (typeof token === 'string' && token !== '') {
    const project = await projects.findProjectByToken(token)
    if (!project) throw new AppError('invalid_api_key', 'Project API key invalid. You can find your project API key in PostHog project settings.')
    return projects.resolveProjectOfUser(user, String(project.id))
  }
  return fallback ?? projects.resolveProjectOfUser(user, '@current')
}

/** `GET /flags/definitions?token=...&send_cohorts` (posthog-node >= 5.29.4), with a personal API key. */
export function definitionsRoute(app: FastifyInstance, opts: DefinitionsOptions) {
  for (const path of ['/flags/definitions', '/flags/definitions/']) {
    app.get(path, async (req, reply) => {
      const user = await authenticatePersonal(req, opts.projects)
      return sendDefinitions(req, reply, opts, await projectOf(req, user, opts.projects))
    })
  }
}

/**
 * Private-scope local evaluation paths of earlier SDKs: `/api/feature_flag/local_evaluation` and
 * `/api/projects/:project_id/feature_flags/local_evaluation`; plus the remote-config payload route.
 */
export async function localEvaluationRoutes(app: FastifyInstance, opts: DefinitionsOptions) {
  for (const path of ['/api/feature_flag/local_evaluation', '/api/feature_flag/local_evaluation/']) {
    app.get(path, async (req, reply) => sendDefinitions(req, reply, opts, await projectOf(req, req.user, opts.projects)))
  }
  for (const path of ['/api/projects/:project_id/feature_flags/local_evaluation', '/api/projects/:project_id/feature_flags/local_evaluation/']) {
    app.get(path, async (req, reply) => sendDefinitions(req, reply, opts, req.project))
  }
  // posthog-node's getRemoteConfigPayload: the payload of the flag's "true" value, as a JSON string.
  for (const path of ['/api/projects/:project_id/feature_flags/:id/remote_config', '/api/projects/:project_id/feature_flags/:id/remote_config/']) {
    app.get(path, async (req) => {
      const ref = (req.params as { id: string }).id
      const state = await opts.decide.state(req.project.id)
      const flag = state.flags.find((f) => f.key === ref || String(f.id) === ref)
      if (!flag) throw new AppError('not_found', 'Not found.')
      const payload = flag.filters.payloads?.['true'] ?? null
      return payload === null ? null : JSON.stringify(typeof payload === 'string' ? payload : JSON.stringify(payload))
    })
  }
}

/** posthog-js remote config: `/array/<token>/config` (JSON) and `/array/<token>/config.js` (script). */
export function remoteConfigRoutes(app: FastifyInstance, opts: DefinitionsOptions, hasFlags: (projectId: number) => boolean | Promise<boolean>) {
  const configOf = async (req: FastifyRequest) => {
    const token = (req.params as { token: string }).token
    const project = opts.projects.cachedProjectByToken(token) ?? (await opts.projects.findProjectByToken(token))
    if (!project) throw new AppError('not_found', 'Not found.')
    const current = await opts.projects.currentSettingsOf(project)
    return { token, ...remoteConfigFields(await hasFlags(project.id), current.settings, 'remote', toSessionRecordingConfig(current.sessionRecording)) }
  }
  app.get('/array/:token/config', async (req) => configOf(req))
  app.get('/array/:token/config.js', async (req, reply) => {
    const config = await configOf(req)
    const script =
      '(function(){window._POSTHOG_REMOTE_CONFIG=window._POSTHOG_REMOTE_CONFIG||{};' +
      `window._POSTHOG_REMOTE_CONFIG[${JSON.stringify(config.token)}]=${JSON.stringify({ config, siteApps: [] })};})();`
    return reply.type('application/javascript').send(script)
  })
}
