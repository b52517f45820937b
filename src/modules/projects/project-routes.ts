import type { FastifyInstance } from 'fastify'
import type { ProjectService } from './project-service.ts'
import type { Project, User } from './project-types.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import { has, readBody, readHttpUrl, readString } from '../../http/drf-fields.ts'
import { addRoute } from '../../http/route-paths.ts'
import type { ProjectSettingsInput } from './project-store.ts'
import { readRecordingSettingsPatch, recordingSettingsJson } from './recording-settings-schemas.ts'

/**
 * A project as PostHog's TeamSerializer shows it (the fields clients read). `level` is the reader's
 * membership level (PostHog's OrganizationMembership: 1 member, 8 admin, 15 owner; null without one).
 */
export function toProjectJson(p: Project, level: number | null = null) {
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
    anonymize_ips: false,
    completed_snapshot_onboarding: false,
    ingested_event: false,
    test_account_filters: [],
    is_demo: false,
    access_control: false,
    effective_membership_level: level,
    slack_incoming_webhook: p.slackIncomingWebhook,
    ...recordingSettingsJson(p.sessionRecording),
  }
}

/**
 * `GET /api/projects/`, `GET` and `PATCH /api/projects/:project_id/`. Every project shows the reader's
 * organization level as `effective_membership_level` (Tally has no per-project access levels).
 */
export async function projectRoutes(app: FastifyInstance, opts: { projects: ProjectService; auth: { levelOf(user: User): Promise<number> } }) {
  const levelOf = async (user: User) => (await opts.auth.levelOf(user)) || null
  app.get('/api/projects/', async (req) => {
    const page = readPage(req)
    const all = await opts.projects.listProjectsOfUser(req.user.id)
    const level = await levelOf(req.user)
    return paginate(req, page, all.length, all.slice(page.offset, page.offset + page.limit).map((p) => toProjectJson(p, level)))
  })
  app.get('/api/projects/:project_id/', async (req) => toProjectJson(req.project, await levelOf(req.user)))
  // Settings PostHog's TeamSerializer takes that Tally uses: the name, the zone queries bucket days in,
  // and the session replay settings (recording-settings-schemas.ts).
  addRoute(app, 'PATCH', '/api/projects/:project_id/', async (req) => {
    const body = readBody(req.body)
    const input: ProjectSettingsInput = {}
    if (has(body, 'name')) input.name = readString(body.name, 'name', { maxLength: 200 })!
    if (has(body, 'timezone')) input.timezone = readString(body.timezone, 'timezone', { maxLength: 100 })!
    if (has(body, 'slack_incoming_webhook')) input.slackIncomingWebhook = readHttpUrl(body.slack_incoming_webhook, 'slack_incoming_webhook', { allowNull: true })
    const sessionRecording = readRecordingSettingsPatch(body, req.project.sessionRecording)
    if (sessionRecording) input.sessionRecording = sessionRecording
    return toProjectJson(await opts.projects.updateSettings(req.project, input), await levelOf(req.user))
  })
}
