import type { SqlClient } from '../storage/sql/sql-client.ts'
import type { EventStore } from '../modules/events/event-store.ts'
import { createSqlProjectStore } from '../storage/sql/sql-project-store.ts'
import { createProjectService } from '../modules/projects/project-service.ts'
import { createSqlInsightStore } from '../storage/sql/sql-insight-store.ts'
import { createSqlDashboardStore } from '../storage/sql/sql-dashboard-store.ts'
import { createSqlActionStore } from '../storage/sql/sql-action-store.ts'
import { createInsightService } from '../modules/insights/insight-service.ts'
import { createDashboardService } from '../modules/dashboards/dashboard-service.ts'
import { createActionService } from '../modules/actions/action-service.ts'

export interface Stores {
  meta: SqlClient
  events: EventStore
}

/** Builds every service from the opened stores. Knows the SQL stores, not which driver runs them. */
export function createServices(stores: Stores) {
  const projects = createProjectService(createSqlProjectStore(stores.meta))
  const insights = createInsightService(createSqlInsightStore(stores.meta))
  const dashboards = createDashboardService(createSqlDashboardStore(stores.meta))
  const actions = createActionService(createSqlActionStore(stores.meta))
  return { projects, insights, dashboards, actions, eventStore: stores.events }
}

export type Services = ReturnType<typeof createServices>
