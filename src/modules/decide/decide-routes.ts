import { randomUUID } from 'node:crypto'
import type { GeoIpLookup } from '../../domain/geoip/geoip-properties.ts'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { decodePublicBody } from '../../http/public-body.ts'
import { installPublicScope } from '../../http/public-scope.ts'
import { AppError } from '../../shared/errors.ts'
import type { ProjectService } from '../projects/project-service.ts'
import type { Project } from '../projects/project-types.ts'
import { decideBody, flagsBody, remoteConfigMembers, SUPPORTED_COMPRESSION } from './decide-response.ts'
import { invalidApiKey, invalidPersonalKey, missingDistinctId, noApiKey, readDecideRequest, withGeoIpPersonProperties } from './decide-request.ts'
import type { DecideService } from './decide-service.ts'
import { definitionsRoute, remoteConfigRoutes } from './definitions-routes.ts'
import type { DefinitionsCache } from './flag-definitions.ts'

export interface DecideRouteOptions {
  decide: DecideService
  projects: ProjectService
  definitions: DefinitionsCache
  /** Adds the `$geoip_*` person properties of the caller's address unless the body says `geoip_disable`. */
  geoip: GeoIpLookup | null
  maxBodyBytes: number
}

/** Decodes the raw body as capture does (JSON, gzip, base64, lz64, form `data=`); an empty body reads as `{}`. */
function decodeBody(req: FastifyRequest, maxBytes: number) {
  const body = req.body as Buffer | undefined
  if ((!body || body.length === 0) && !(req.query as Record<string, unknown>).data) return { payload: {}, form: {} }
  try {
    return decodePublicBody(req, maxBytes)
  } catch (err) {
    if (err instanceof AppError && err.code === 'invalid_payload') {
      const detail = err.message.startsWith('Malformed request data') ? err.message : `Malformed request data: ${err.message}`
      throw new AppError('invalid_payload', detail, null, { subCode: 'malformed_data' })
    }
    throw err
  }
}

/** The project of a project token, or (PostHog's fallback) of a personal API key plus `project_id`. */
async function resolveProject(projects: ProjectService, token: string | null, projectId: string | null): Promise<Project> {
  if (!token) throw noApiKey()
  const project = projects.cachedProjectByToken(token) ?? (await projects.findProjectByToken(token))
  if (project) return project
  if (projectId === null) throw invalidApiKey()
  try {
    const user = await projects.authenticatePersonalKey(token)
    return await projects.resolveProjectOfUser(user, projectId)
  } catch {
    throw invalidPersonalKey()
  }
}

function version(req: FastifyRequest, fallback: number): number {
  const raw = (req.query as Record<string, unknown>).v
  if (raw === undefined || raw === '') return fallback
  const v = Number(raw)
  return Number.isInteger(v) ? v : 2 // PostHog: a non-integer `v` reads as 2
}

/**
 * `/decide/` (v1-v4), `/flags/` (v1, v2), `/flags/definitions`, and posthog-js remote config. Bodies
 * are read raw (the public scope's parser, CORS included) and decoded exactly as capture decodes them.
 */
export async function decideRoutes(app: FastifyInstance, opts: DecideRouteOptions) {
  installPublicScope(app, { maxBodyBytes: opts.maxBodyBytes })

  async function evaluate(req: FastifyRequest) {
    const { payload, form } = decodeBody(req, opts.maxBodyBytes)
    const { request, token, projectId } = readDecideRequest(payload, form, req.query as Record<string, unknown>)
    const project = await resolveProject(opts.projects, token, projectId)
    if (!request) throw missingDistinctId()
    if (opts.geoip && !request.geoipDisable && project.geoipEnabled && req.ip) {
      request.personProperties = await withGeoIpPersonProperties(opts.geoip, req.ip, request.personProperties)
    }
    const result = await opts.decide.evaluate(project.id, request)
    return { project, result }
  }
  const hasFlags = async (projectId: number) => (await opts.decide.state(projectId)).compiled.flags.some((f) => f.active)
  // The answers are built as JSON strings from per-flag fragments cached with the flag state.
  const sendJson = (reply: FastifyReply, body: Buffer) => reply.header('content-type', 'application/json; charset=utf-8').send(body)

  const minimal = {
    config: { enable_collect_everything: true },
    toolbarParams: {},
    isAuthenticated: false,
    supportedCompression: SUPPORTED_COMPRESSION,
    sessionRecording: false,
    featureFlags: {},
  }

  for (const path of ['/decide', '/decide/']) {
    app.post(path, async (req, reply) => {
      const { project, result } = await evaluate(req)
      const v = version(req, 1)
      const current = await opts.projects.currentSettingsOf(project)
      const opening = remoteConfigMembers(await hasFlags(project.id), current.settings, 'decide', current.sessionRecording)
      return sendJson(reply, decideBody(v, result, opening, randomUUID()))
    })
    app.get(path, async () => minimal)
    app.options(path, async () => ({ status: 1 }))
  }
  for (const path of ['/flags', '/flags/']) {
    app.post(path, async (req, reply) => {
      const q = req.query as Record<string, unknown>
      const noVersion = q.v === undefined && q.config === undefined
      const v = noVersion ? 2 : version(req, 1)
      const withConfig = noVersion || q.config === 'true' || q.config === '1'
      const { project, result } = await evaluate(req)
      const current = withConfig ? await opts.projects.currentSettingsOf(project) : null
      const config = current ? remoteConfigMembers(await hasFlags(project.id), current.settings, 'remote', current.sessionRecording) : remoteConfigMembers(null)
      return sendJson(reply, flagsBody(v, result, config, randomUUID(), Date.now()))
    })
    app.get(path, async () => ({ ...minimal, flags: {}, errorsWhileComputingFlags: false }))
    app.options(path, async (_req, reply) => reply.code(204).header('Allow', 'GET, POST, OPTIONS, HEAD').send())
  }
  definitionsRoute(app, opts)
  remoteConfigRoutes(app, opts, hasFlags)
}
