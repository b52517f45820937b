import type { NotificationRuleStore, ProjectRules } from '../../modules/notifications/notification-rules.ts'
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
  }
}
