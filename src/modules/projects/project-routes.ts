import type { FastifyInstance } from 'fastify'
import type { ProjectService } from './project-service.ts'
import type { Project } from './project-types.ts'
import { paginate, readPage } from '../../http/pagination.ts'

/** A project as PostHog's TeamSerializer shows it (the fields clients read). */
export function toProjectJson(p: Project) {
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
    effective_membership_level: 8,
  }
}

/** `GET /api/projects/` and `GET /api/projects/:project_id/`. */
export async function projectRoutes(app: FastifyInstance, opts: { projects: ProjectService }) {
  app.get('/api/projects/', async (req) => {
    const page = readPage(req)
    const all = await opts.projects.listProjectsOfUser(req.user.id)
    return paginate(req, page, all.length, all.slice(page.offset, page.offset + page.limit).map(toProjectJson))
  })
  app.get('/api/projects/:project_id/', async (req) => toProjectJson(req.project))
}
