import type { Page } from '../../shared/page.ts'
import { AppError, validationError } from '../../shared/errors.ts'
import type { Project, User } from '../projects/project-types.ts'
import type { DashboardRequest } from './dashboard-schemas.ts'
import type { DashboardStore } from './dashboard-store.ts'
import { applyTemplate, applyTileChanges, copyTiles, orderTiles } from './dashboard-tiles.ts'
import { findBuiltInTemplate } from './dashboard-templates.ts'
import type { Dashboard, DashboardTemplate, Tile } from './dashboard-types.ts'

/** What the requesting user may do with a dashboard (PostHog's `user_permissions.py`). */
export interface Access {
  effectiveRestrictionLevel: number
  effectivePrivilegeLevel: number
  canEdit: boolean
  canRestrict: boolean
}

export interface DashboardView {
  dashboard: Dashboard
  access: Access
  tiles?: Tile[]
}

const CAN_VIEW = 21
const CAN_EDIT = 37
const ADMIN_LEVEL = 8

function notFound(): AppError {
  return new AppError('not_found', 'Not found.')
}

/**
 * Dashboards: CRUD with soft delete, restriction levels, tiles, templates and duplication. Every write
 * runs in one transaction, so a failing step (an unknown source dashboard, a bad tile) writes nothing.
 */
export function createDashboardService(store: DashboardStore) {
  /**
   * Tally has every feature PostHog licenses, so the stored restriction level is the effective one.
   * The creator and project admins "can restrict" and always edit; others edit only unrestricted dashboards.
   */
  function accessOf(d: Dashboard, user: User, memberLevel: number | null): Access {
    const canRestrict = d.createdBy?.id === user.id || (memberLevel ?? 0) >= ADMIN_LEVEL
    const privilege = d.restrictionLevel === 21 || canRestrict ? CAN_EDIT : CAN_VIEW
    return { effectiveRestrictionLevel: d.restrictionLevel, effectivePrivilegeLevel: privilege, canEdit: privilege >= CAN_EDIT, canRestrict }
  }

  async function view(tx: DashboardStore, project: Project, user: User, id: number): Promise<DashboardView> {
    const dashboard = (await tx.find(project.id, id, { includeDeleted: true }))!
    const access = accessOf(dashboard, user, await tx.memberLevel(project.id, user.id))
    return { dashboard, access, tiles: orderTiles(await tx.tiles(id)) }
  }

  function assertCanEdit(access: Access): void {
    if (!access.canEdit) throw new AppError('permission_denied', "You don't have edit permissions for this dashboard.")
  }

  async function loadTemplate(key: string): Promise<DashboardTemplate> {
    const template = findBuiltInTemplate(key)
    if (!template) throw validationError('use_template', `Invalid template provided: ${key}`, 'invalid_input')
    return template
  }

  return {
    async list(project: Project, user: User, page: Page): Promise<{ count: number; rows: DashboardView[] }> {
      const [{ count, rows }, level] = await Promise.all([store.list(project.id, page), store.memberLevel(project.id, user.id)])
      return { count, rows: rows.map((dashboard) => ({ dashboard, access: accessOf(dashboard, user, level) })) }
    },

    /** Retrieving records the view time, as PostHog's `last_accessed_at`. */
    async get(project: Project, user: User, id: number): Promise<DashboardView> {
      if (!(await store.find(project.id, id))) throw notFound()
      await store.touch(id)
      return view(store, project, user, id)
    },

    async create(project: Project, user: User, req: DashboardRequest): Promise<DashboardView> {
      if (req.useTemplate && req.useDashboard !== undefined) {
        throw validationError(null, '`use_dashboard` and `use_template` cannot be used together', 'invalid_input')
      }
      const template = req.useTemplate ? await loadTemplate(req.useTemplate) : null
      const creationMode = template ? 'template' : req.useDashboard !== undefined ? 'duplicate' : 'default'
      return store.inTransaction(async (tx) => {
        const id = await tx.insert({ ...req.input, projectId: project.id, createdBy: user.id, creationMode })
        const ctx = { projectId: project.id, userId: user.id, dashboardId: id }
        if (template) await applyTemplate(tx, { ...ctx, keepName: !!req.input.name }, template)
        if (req.useDashboard !== undefined) {
          const source = await tx.find(project.id, req.useDashboard)
          if (!source) throw validationError('use_dashboard', 'Invalid value provided', 'invalid_input')
          await copyTiles(tx, ctx, await tx.tiles(source.id), req.duplicateTiles)
        }
        if (req.tiles) await applyTileChanges(tx, ctx, req.tiles)
        return view(tx, project, user, id)
      })
    },

    /**
     * PATCH. `deleted: true` soft-deletes the dashboard and its tiles (and, with `delete_insights`, the
     * insights shown nowhere else); a body of only `deleted: false` may target a deleted dashboard and
     * restores it with its tiles and their insights.
     */
    async update(project: Project, user: User, id: number, req: DashboardRequest, isRestoreOnly: boolean): Promise<DashboardView> {
      return store.inTransaction(async (tx) => {
        const current = await tx.find(project.id, id, { includeDeleted: isRestoreOnly })
        if (!current) throw notFound()
        const access = accessOf(current, user, await tx.memberLevel(project.id, user.id))
        assertCanEdit(access)
        const { restrictionLevel } = req.input
        if (restrictionLevel !== undefined && restrictionLevel !== current.restrictionLevel && !access.canRestrict) {
          throw new AppError(
            'permission_denied',
            "Only the dashboard owner and project admins have the restriction rights required to change the dashboard's restriction level.",
          )
        }
        const ctx = { projectId: project.id, userId: user.id, dashboardId: id }
        if (req.tiles) await applyTileChanges(tx, ctx, req.tiles)
        if (req.input.deleted === true && !current.deleted) {
          if (req.deleteInsights) await tx.setInsightsDeleted(await tx.insightsOnlyOn(id), true)
          await tx.setTilesDeleted(id, true)
        } else if (req.input.deleted === false && current.deleted) {
          await tx.setTilesDeleted(id, false)
          await tx.setInsightsDeleted(await tx.insightsOn(id), false)
        }
        await tx.update(project.id, id, req.input)
        return view(tx, project, user, id)
      })
    },

    /** PostHog's `move_tile`: re-points the tile at `toDashboard` and returns the SOURCE dashboard. */
    async moveTile(project: Project, user: User, id: number, move: { tileId: number; toDashboard: number }): Promise<DashboardView> {
      return store.inTransaction(async (tx) => {
        const source = await tx.find(project.id, id)
        if (!source) throw notFound()
        assertCanEdit(accessOf(source, user, await tx.memberLevel(project.id, user.id)))
        const tile = await tx.findTile(id, move.tileId)
        if (!tile || tile.deleted) throw validationError('tile__id', `Invalid pk "${move.tileId}" - object does not exist.`, 'does_not_exist')
        const target = await tx.find(project.id, move.toDashboard)
        if (!target) throw validationError('toDashboard', `Invalid pk "${move.toDashboard}" - object does not exist.`, 'does_not_exist')
        assertCanEdit(accessOf(target, user, await tx.memberLevel(project.id, user.id)))
        await tx.moveTile(tile.id, target.id)
        return view(tx, project, user, id)
      })
    },

    /** PostHog's `create_from_template_json`: a new dashboard built from a template document. */
    async createFromTemplate(project: Project, user: User, template: DashboardTemplate): Promise<DashboardView> {
      return store.inTransaction(async (tx) => {
        const id = await tx.insert({ projectId: project.id, createdBy: user.id, creationMode: 'default' })
        await applyTemplate(tx, { projectId: project.id, userId: user.id, dashboardId: id, keepName: false }, template)
        return view(tx, project, user, id)
      })
    },
  }
}

export type DashboardService = ReturnType<typeof createDashboardService>
