import { validationError } from '../../shared/errors.ts'
import type { DashboardStore } from './dashboard-store.ts'
import type { DashboardTemplate, TemplateTile, Tile, TileInput } from './dashboard-types.ts'

const asObject = (v: unknown): Record<string, unknown> | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null)
const asString = (v: unknown): string | null => (typeof v === 'string' ? v : null)

/** Tiles in PostHog's display order: by the `sm` layout's row then column (a missing coordinate counts as 100). */
export function orderTiles(tiles: Tile[]): Tile[] {
  const at = (t: Tile, k: 'x' | 'y') => {
    const v = asObject(t.layouts.sm)?.[k]
    return typeof v === 'number' ? v : 100
  }
  return [...tiles].sort((a, b) => at(a, 'y') - at(b, 'y') || at(a, 'x') - at(b, 'x') || a.id - b.id)
}

/** One template tile made real: an insight (with `filter_test_accounts` defaulting to true, as PostHog does) or a text card. */
async function createTemplateTile(tx: DashboardStore, ctx: { projectId: number; userId: number; dashboardId: number }, tile: TemplateTile) {
  const layouts = asObject(tile.layouts) ?? {}
  const color = asString(tile.color)
  if (tile.type === 'INSIGHT') {
    const query = asObject(tile.query)
    const filters = query ? {} : (asObject(tile.filters) ?? {})
    const insightId = await tx.insertInsight({
      projectId: ctx.projectId,
      createdBy: ctx.userId,
      name: asString(tile.name),
      description: asString(tile.description) ?? '',
      query,
      filters: { ...filters, filter_test_accounts: filters.filter_test_accounts ?? true },
    })
    await tx.insertTile({ dashboardId: ctx.dashboardId, insightId, layouts, color })
  } else if (tile.type === 'TEXT') {
    const textId = await tx.insertText({ projectId: ctx.projectId, body: asString(tile.body) ?? '', createdBy: ctx.userId })
    await tx.insertTile({ dashboardId: ctx.dashboardId, textId, layouts, color })
  }
  // PostHog logs and skips a tile of any other type.
}

/** PostHog's `create_from_template`: name (unless given), filters, description, tags, then every tile. */
export async function applyTemplate(
  tx: DashboardStore,
  ctx: { projectId: number; userId: number; dashboardId: number; keepName: boolean },
  template: DashboardTemplate,
): Promise<void> {
  await tx.update(ctx.projectId, ctx.dashboardId, {
    ...(ctx.keepName ? {} : { name: template.template_name }),
    filters: template.dashboard_filters,
    description: template.dashboard_description,
    ...(template.tags?.length ? { tags: template.tags } : {}),
  })
  for (const tile of template.tiles) await createTemplateTile(tx, ctx, tile)
}

/**
 * `use_dashboard`: the source's live tiles onto the new dashboard. By default a copied tile shows the
 * same insight; with `duplicate_tiles` the insight (named "<name> (Copy)") and text are copied too.
 */
export async function copyTiles(tx: DashboardStore, ctx: { projectId: number; userId: number; dashboardId: number }, source: Tile[], deep: boolean) {
  for (const t of orderTiles(source)) {
    const common = { dashboardId: ctx.dashboardId, layouts: t.layouts, color: t.color, filtersOverrides: t.filtersOverrides }
    if (t.insight) {
      const insightId = deep
        ? await tx.insertInsight({
            projectId: ctx.projectId,
            createdBy: ctx.userId,
            name: t.insight.name === null ? null : `${t.insight.name} (Copy)`,
            description: t.insight.description,
            query: t.insight.query,
            filters: t.insight.filters,
          })
        : t.insight.id
      await tx.insertTile({ ...common, insightId })
    } else if (t.text) {
      const textId = deep ? await tx.insertText({ projectId: ctx.projectId, body: t.text.body, createdBy: ctx.userId }) : t.text.id
      await tx.insertTile({ ...common, textId })
    }
  }
}

/** A PATCH's `tiles`: updates layouts/color/deleted of existing tiles, edits or creates text cards. */
export async function applyTileChanges(tx: DashboardStore, ctx: { projectId: number; userId: number; dashboardId: number }, tiles: TileInput[]) {
  for (const [i, t] of tiles.entries()) {
    const patch = { layouts: t.layouts, color: t.color, deleted: t.deleted, filtersOverrides: t.filtersOverrides }
    if (t.id === undefined) {
      const textId = await tx.insertText({ projectId: ctx.projectId, body: t.text!.body, createdBy: ctx.userId })
      await tx.insertTile({ dashboardId: ctx.dashboardId, textId, layouts: t.layouts, color: t.color, filtersOverrides: t.filtersOverrides })
      continue
    }
    const existing = await tx.findTile(ctx.dashboardId, t.id)
    if (!existing) throw validationError(`tiles__${i}__id`, `Invalid pk "${t.id}" - object does not exist.`, 'does_not_exist')
    await tx.updateTile(existing.id, patch)
    if (t.text) {
      if (existing.textId !== null) await tx.updateText(existing.textId, t.text.body)
      else throw validationError(`tiles__${i}__text`, 'This tile shows an insight, not a text card.', 'invalid_input')
    }
  }
}
