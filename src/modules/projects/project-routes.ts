import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ProjectService } from './project-service.ts'
import type { Project, User } from './project-types.ts'
import { SDK_SETTING_KEYS, type SdkSettingKey } from './project-settings.ts'
import type { ProjectSettingsInput } from './project-store.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import { has, readBody, readBool, readHttpUrl, readInt, readString, type Body } from '../../http/drf-fields.ts'
import { addRoute } from '../../http/route-paths.ts'
import { AppError } from '../../shared/errors.ts'
import { readCleaningRule } from '../../domain/query/paths/paths-query.ts'
import { cohortIdsOf, filtersToExpr } from '../../domain/query/filter-expr.ts'
import { readArray } from '../../domain/query/query-fields.ts'
import { readRecordingSettingsPatch, recordingSettingsJson } from './recording-settings-schemas.ts'
import { DEFAULT_RECORDING_SETTINGS, type RecordingSettings } from '../../domain/replay/recording-settings.ts'

/**
 * A project as PostHog's TeamSerializer shows it (the fields clients read). `level` is the reader's
 * membership level (PostHog's OrganizationMembership: 1 member, 8 admin, 15 owner; null without one);
 * `ingestedEvent` whether the project has received an event (integrations poll it to see an install work).
 */
export function toProjectJson(p: Project, level: number | null = null, ingestedEvent = false) {
  return {
    id: p.id,
    uuid: p.uuid,
    organization: p.organizationUuid,
    project_id: p.id,
    api_token: p.apiToken,
    name: p.name,
    timezone: p.timezone,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
    data_attributes: ['data-attr'],
    app_urls: [],
    anonymize_ips: p.anonymizeIps,
    geoip_enabled: p.geoipEnabled,
    completed_snapshot_onboarding: false,
    ingested_event: ingestedEvent,
    test_account_filters: p.testAccountFilters,
    path_cleaning_filters: p.pathCleaningFilters,
    is_demo: false,
    access_control: false,
    effective_membership_level: level,
    slack_incoming_webhook: p.slackIncomingWebhook,
    event_retention_days: p.eventRetentionDays,
    ...recordingSettingsJson(p.sessionRecording),
    ...p.settings,
  }
}

/**
 * The settings of a PATCH or create body that Tally honours: `name`, `timezone`, the replay settings
 * (recording-settings-schemas.ts) and PostHog's SDK settings (DRF BooleanFields that allow null). Every other key is ignored, as PostHog's serializer
 * ignores keys it does not know (docs/projects.md lists PostHog's settings Tally does not honour).
 */
function readSettings(body: Body, recording: RecordingSettings): ProjectSettingsInput {
  const input: ProjectSettingsInput = {}
  const sessionRecording = readRecordingSettingsPatch(body, recording)
  if (sessionRecording) input.sessionRecording = sessionRecording
  if (has(body, 'name')) input.name = readString(body.name, 'name', { maxLength: 200 })!
  if (has(body, 'timezone')) input.timezone = readString(body.timezone, 'timezone', { maxLength: 100 })!
  const sdk: Partial<Record<SdkSettingKey, boolean | null>> = {}
  for (const key of SDK_SETTING_KEYS) if (has(body, key)) sdk[key] = body[key] === null ? null : readBool(body[key], key)
  if (Object.keys(sdk).length > 0) input.sdk = sdk
  if (has(body, 'event_retention_days')) input.eventRetentionDays = readInt(body.event_retention_days, 'event_retention_days', { allowNull: true, min: 1, max: 36_500 })
  if (has(body, 'anonymize_ips')) input.anonymizeIps = readBool(body.anonymize_ips, 'anonymize_ips')
  if (has(body, 'geoip_enabled')) input.geoipEnabled = readBool(body.geoip_enabled, 'geoip_enabled')
  if (has(body, 'slack_incoming_webhook')) input.slackIncomingWebhook = readHttpUrl(body.slack_incoming_webhook, 'slack_incoming_webhook', { allowNull: true })
  if (has(body, 'test_account_filters')) input.testAccountFilters = readTestAccountFilters(body.test_account_filters)
  if (has(body, 'path_cleaning_filters')) input.pathCleaningFilters = readArray(body.path_cleaning_filters, 'path_cleaning_filters').map((r, i) => readCleaningRule(r, `path_cleaning_filters.${i}`))
  return input
}

/**
 * A list of property filters, checked as queries read them (a 400 naming the filter otherwise).
 * Cohort filters (PostHog offers "not in cohort" here) are checked for shape only: a query that
 * reads a cohort deleted since answers a 400 naming it, as for any cohort filter.
 */
function readTestAccountFilters(v: unknown): unknown[] {
  const list = readArray(v, 'test_account_filters')
  const shapeOnly = new Map(cohortIdsOf(list).map((id) => [id, { id, name: '', properties: null, isStatic: true, personIds: [] }]))
  filtersToExpr(list, 'test_account_filters', shapeOnly)
  return list
}

interface ProjectRouteOptions {
  projects: ProjectService
  auth: { levelOf(user: User): Promise<number>; requireAdmin(user: User): Promise<{ organizationId: number; organizationUuid: string }> }
}

/**
 * `GET|POST /api/projects/`, `POST /api/organizations/:organization_id/projects/`, `GET` and `PATCH
 * /api/projects/:project_id/`. Every project shows the reader's organization level as
 * `effective_membership_level` (Tally has no per-project access levels).
 */
export async function projectRoutes(app: FastifyInstance, opts: ProjectRouteOptions) {
  const { projects } = opts
  const levelOf = async (user: User) => (await opts.auth.levelOf(user)) || null
  const ingested = async (p: Project) => (await projects.projectsWithEvents([p.id])).has(p.id)

  app.get('/api/projects/', async (req) => {
    const page = readPage(req)
    const all = await projects.listProjectsOfUser(req.user.id)
    const level = await levelOf(req.user)
    const shown = all.slice(page.offset, page.offset + page.limit)
    const withEvents = await projects.projectsWithEvents(shown.map((p) => p.id))
    return paginate(req, page, all.length, shown.map((p) => toProjectJson(p, level, withEvents.has(p.id))))
  })
  app.get('/api/projects/:project_id/', async (req) => toProjectJson(req.project, await levelOf(req.user), await ingested(req.project)))
  addRoute(app, 'PATCH', '/api/projects/:project_id/', async (req) => {
    const updated = await projects.updateSettings(req.project, readSettings(readBody(req.body), req.project.sessionRecording))
    return toProjectJson(updated, await levelOf(req.user), await ingested(updated))
  })

  // A new project of the user's organization with its own API key (PostHog: organization admins only).
  const create = async (req: FastifyRequest, organizationRef: string | null) => {
    const membership = await opts.auth.requireAdmin(req.user)
    if (organizationRef !== null && organizationRef !== '@current' && organizationRef !== membership.organizationUuid) {
      throw new AppError('not_found', 'Not found.')
    }
    const { name, ...settings } = readSettings(readBody(req.body), DEFAULT_RECORDING_SETTINGS)
    const { project } = await projects.createProject(name ?? 'Default project', membership.organizationId, settings)
    return toProjectJson(project, await levelOf(req.user), false)
  }
  addRoute(app, 'POST', '/api/projects/', async (req, reply) => reply.code(201).send(await create(req, null)))
  addRoute(app, 'POST', '/api/organizations/:organization_id/projects/', async (req, reply) =>
    reply.code(201).send(await create(req, (req.params as Record<string, string>).organization_id)))
}
