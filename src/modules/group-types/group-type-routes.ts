import type { FastifyInstance } from 'fastify'
import { readBody } from '../../http/drf-fields.ts'
import { addRoute } from '../../http/route-paths.ts'
import { parseGroupTypeCreate, parseMetadataUpdates } from './group-type-schemas.ts'
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
  const base = '/api/projects/:project_id/groups_types/'
  const { groupTypes } = opts
  const listJson = async (projectId: number) => (await groupTypes.list(projectId)).map(toGroupTypeJson)

  addRoute(app, 'GET', base, async (req) => listJson(req.project.id))
  addRoute(app, 'POST', base, async (req, reply) => {
    const created = await groupTypes.create(req.project.id, parseGroupTypeCreate(readBody(req.body)))
    return reply.code(201).send(toGroupTypeJson(created))
  })
  addRoute(app, 'PATCH', `${base}update_metadata/`, async (req) => {
    for (const names of parseMetadataUpdates(req.body)) await groupTypes.updateNames(req.project.id, names.groupTypeIndex, names)
    return listJson(req.project.id)
  })
}
