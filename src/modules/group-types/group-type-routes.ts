import type { FastifyInstance } from 'fastify'
import type { GroupType } from './group-type-store.ts'
import type { GroupTypeService } from './group-type-service.ts'

export function toGroupTypeJson(t: GroupType) {
  return { group_type: t.groupType, group_type_index: t.groupTypeIndex, name_singular: t.nameSingular, name_plural: t.namePlural }
}

/**
 * `/api/projects/:project_id/groups_types/` as PostHog names it: a plain list. POST (create by name) is
 * a Tally addition; PostHog creates group types only from events. `update_metadata` renames them.
 */
export async function groupTypeRoutes(app: FastifyInstance, opts: { groupTypes: GroupTypeService }) {
  const base = '/api/projects/:project_id/groups_types'
  for (const path of [base, `${base}/`]) {
    app.get(path, async (req) => (await opts.groupTypes.list(req.project.id)).map(toGroupTypeJson))
    app.post(path, async (req, reply) => {
      const body = (req.body ?? {}) as Record<string, unknown>
      return reply.code(201).send(toGroupTypeJson(await opts.groupTypes.create(req.project.id, body.group_type)))
    })
  }
  for (const path of [`${base}/update_metadata`, `${base}/update_metadata/`]) {
    app.patch(path, async (req) => {
      const items = Array.isArray(req.body) ? (req.body as Array<Record<string, unknown>>) : [req.body as Record<string, unknown>]
      for (const item of items) {
        const names = { nameSingular: (item?.name_singular as string) ?? null, namePlural: (item?.name_plural as string) ?? null }
        await opts.groupTypes.updateNames(req.project.id, Number(item?.group_type_index), names)
      }
      return (await opts.groupTypes.list(req.project.id)).map(toGroupTypeJson)
    })
  }
}
