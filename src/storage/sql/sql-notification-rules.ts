import type { GroupDetails, NotificationRuleStore, ProjectRules } from '../../modules/notifications/notification-rules.ts'
import type { SqlClient } from './sql-client.ts'

// One statement per micro-batch: each project with its notifying (or destination-filtered) actions
// and its enabled destinations, as JSON.
const RULES_SQL = `
SELECT p.id, p.name, p.slack_incoming_webhook AS chat,
  COALESCE((SELECT json_agg(json_build_object('id', a.id, 'name', a.name, 'steps', a.steps,
      'notify', a.post_to_slack AND p.slack_incoming_webhook IS NOT NULL, 'format', a.slack_message_format))
    FROM actions a WHERE a.project_id = p.id AND NOT a.deleted AND (
      (a.post_to_slack AND p.slack_incoming_webhook IS NOT NULL)
      OR EXISTS (SELECT 1 FROM destinations d WHERE d.project_id = p.id AND d.enabled AND NOT d.deleted
                 AND d.filters->'actions' @> to_jsonb(a.id)))), '[]') AS actions,
  COALESCE((SELECT json_agg(json_build_object('id', d.id, 'url', d.url, 'headers', d.headers, 'filters', d.filters,
      'body_template', d.body_template))
    FROM destinations d WHERE d.project_id = p.id AND d.enabled AND NOT d.deleted), '[]') AS destinations
FROM projects p WHERE p.id = ANY($1::int[])`

// Every referenced group with its type's name; a group never identified has no row yet: `{}`.
const GROUPS_SQL = `
SELECT r.project_id, r.group_type_index, r.group_key, m.group_type, COALESCE(g.group_properties, '{}') AS properties
FROM unnest($1::int[], $2::int[], $3::text[]) AS r(project_id, group_type_index, group_key)
JOIN group_type_mappings m ON m.project_id = r.project_id AND m.group_type_index = r.group_type_index
LEFT JOIN groups g ON g.project_id = r.project_id AND g.group_type_index = r.group_type_index AND g.group_key = r.group_key`

/** NotificationRuleStore over any SqlClient. */
export function createSqlNotificationRules(db: SqlClient): NotificationRuleStore {
  return {
    async rulesFor(projectIds) {
      if (projectIds.length === 0) return []
      const rows = await db.query(RULES_SQL, [[...projectIds]])
      return rows.map((r): ProjectRules => ({
        projectId: r.id,
        projectName: r.name,
        chatWebhook: r.chat ?? null,
        actions: (r.actions as any[]).map((a) => ({ id: a.id, name: a.name ?? '', steps: a.steps ?? [], notify: a.notify, messageFormat: a.format ?? '' })),
        destinations: (r.destinations as any[]).map((d) => ({ id: d.id, url: d.url, headers: d.headers ?? {}, filters: d.filters ?? {}, bodyTemplate: d.body_template })),
      }))
    },
    async groupsOf(refs) {
      if (refs.length === 0) return []
      const rows = await db.query(GROUPS_SQL, [refs.map((r) => r.projectId), refs.map((r) => r.index), refs.map((r) => r.key)])
      return rows.map((r): GroupDetails => ({ projectId: r.project_id, index: Number(r.group_type_index), key: r.group_key, type: r.group_type, properties: r.properties ?? {} }))
    },
  }
}
