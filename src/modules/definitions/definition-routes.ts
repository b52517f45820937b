import type { FastifyInstance } from 'fastify'
import { paginate, readPage } from '../../http/pagination.ts'
import { addRoute } from '../../http/route-paths.ts'
import { parseEventDefinitionQuery, parsePropertyDefinitionQuery, parseSeenTogetherQuery } from './definition-schemas.ts'
import type { DefinitionService } from './definition-service.ts'
import type { EventDefinition, PropertyDefinition } from './definition-types.ts'

/**
 * An event definition as PostHog's open-source EventDefinitionSerializer shows it. Volume and query
 * usage are enterprise figures in PostHog, null in its open-source edition and here.
 */
export function toEventDefinitionJson(d: EventDefinition) {
  return {
    id: d.id,
    name: d.name,
    created_at: d.createdAt.toISOString(),
    last_seen_at: d.lastSeenAt.toISOString(),
    last_updated_at: d.lastSeenAt.toISOString(),
    tags: [],
    is_action: false,
    action_id: null,
    created_by: null,
    post_to_slack: false,
    volume_30_day: null,
    query_usage_30_day: null,
  }
}

/** A property definition as PostHog's PropertyDefinitionSerializer shows it, with its kind and when it was seen. */
export function toPropertyDefinitionJson(d: PropertyDefinition) {
  return {
    id: d.id,
    name: d.name,
    is_numerical: d.propertyType === 'Numeric',
    property_type: d.propertyType,
    type: d.type,
    group_type_index: d.groupTypeIndex,
    tags: [],
    is_seen_on_filtered_events: d.isSeenOnFilteredEvents,
    created_at: d.createdAt.toISOString(),
    last_seen_at: d.lastSeenAt.toISOString(),
    volume_30_day: null,
    query_usage_30_day: null,
  }
}

const idOf = (req: { params: unknown }) => String((req.params as { id?: unknown }).id ?? '')

/** `/api/projects/:project_id/event_definitions/` and `/property_definitions/` (read-only; ingestion writes them). */
export async function definitionRoutes(app: FastifyInstance, opts: { definitions: DefinitionService }) {
  const { definitions } = opts
  const events = '/api/projects/:project_id/event_definitions/'
  const properties = '/api/projects/:project_id/property_definitions/'

  addRoute(app, 'GET', events, async (req) => {
    const query = parseEventDefinitionQuery(req.query as Record<string, unknown>)
    const page = readPage(req)
    const { count, rows } = await definitions.listEvents(req.project.id, query, page)
    return paginate(req, page, count, rows.map(toEventDefinitionJson))
  })
  addRoute(app, 'GET', `${events}:id/`, async (req) => toEventDefinitionJson(await definitions.getEvent(req.project.id, idOf(req))))
  addRoute(app, 'GET', properties, async (req) => {
    const query = parsePropertyDefinitionQuery(req.query as Record<string, unknown>)
    const page = readPage(req)
    const { count, rows } = await definitions.listProperties(req.project.id, query, page)
    return paginate(req, page, count, rows.map(toPropertyDefinitionJson))
  })
  addRoute(app, 'GET', `${properties}seen_together/`, async (req) => {
    const { eventNames, property } = parseSeenTogetherQuery(req.query as Record<string, unknown>)
    return definitions.seenTogether(req.project.id, eventNames, property)
  })
  addRoute(app, 'GET', `${properties}:id/`, async (req) => toPropertyDefinitionJson(await definitions.getProperty(req.project.id, idOf(req))))
}
