import type { Page } from '../../shared/page.ts'
import { AppError, validationError } from '../../shared/errors.ts'
import type { Project, User } from '../projects/project-types.ts'
import type { InsightStore } from './insight-store.ts'
import type { Insight, InsightInput } from './insight-types.ts'

function notFound(): AppError {
  return new AppError('not_found', 'Not found.')
}

/** Insights: minimal CRUD with soft delete, and placing them on dashboards (PostHog's `dashboards: [ids]`). */
export function createInsightService(store: InsightStore) {
  /** PostHog's `_update_insight_dashboards`: unknown ids are refused, deleted dashboards ignored. */
  async function placeOn(tx: InsightStore, project: Project, insightId: number, ids: number[]) {
    const found = await tx.findDashboards(project.id, ids)
    const missing = ids.find((id) => !found.some((d) => d.id === id))
    if (missing !== undefined) throw validationError('dashboards', `Invalid pk "${missing}" - object does not exist.`, 'does_not_exist')
    await tx.setDashboards(insightId, found.filter((d) => !d.deleted).map((d) => d.id))
  }

  return {
    list: (project: Project, page: Page) => store.list(project.id, page),

    async get(project: Project, id: number): Promise<Insight> {
      return (await store.find(project.id, id)) ?? Promise.reject(notFound())
    },

    async create(project: Project, user: User, input: InsightInput, dashboards?: number[]): Promise<Insight> {
      return store.inTransaction(async (tx) => {
        const id = await tx.insert({ ...input, projectId: project.id, createdBy: user.id })
        if (dashboards) await placeOn(tx, project, id, dashboards)
        return (await tx.find(project.id, id, { includeDeleted: true }))!
      })
    },

    /** A PATCH whose only field is `deleted: false` may target a deleted insight and restores it. */
    async update(project: Project, id: number, input: InsightInput, dashboards: number[] | undefined, isRestoreOnly: boolean) {
      return store.inTransaction(async (tx) => {
        const current = await tx.find(project.id, id, { includeDeleted: isRestoreOnly })
        if (!current) throw notFound()
        await tx.update(project.id, id, input)
        if (dashboards) await placeOn(tx, project, id, dashboards)
        return (await tx.find(project.id, id, { includeDeleted: true }))!
      })
    },
  }
}

export type InsightService = ReturnType<typeof createInsightService>
