import { newUuid } from '../../shared/ids.ts'
import type { BootstrapInput, ProjectStore } from '../../modules/projects/project-store.ts'
import type { Organization, Project, User } from '../../modules/projects/project-types.ts'
import type { SqlClient } from './sql-client.ts'
import { SDK_SETTING_KEYS, sdkSettingsOfRow } from '../../modules/projects/project-settings.ts'
import { cannotBeStored, refuseNul } from './sql-text.ts'
import { readStoredRecordingSettings } from '../../domain/replay/recording-settings.ts'

const PROJECT_COLUMNS = `p.id, p.uuid, p.organization_id, o.uuid AS organization_uuid, p.name, p.api_token,
  p.timezone, p.created_at, p.updated_at, p.session_recording, p.slack_incoming_webhook, p.event_retention_days, p.anonymize_ips, p.geoip_enabled,
  p.test_account_filters, p.path_cleaning_filters, ${SDK_SETTING_KEYS.map((k) => `p.${k}`).join(', ')}`
const PROJECT_FROM = 'projects p JOIN organizations o ON o.id = p.organization_id'

type Row = Record<string, any>

export function toUser(r: Row): User {
  return {
    id: r.id,
    uuid: r.uuid,
    distinctId: r.distinct_id,
    firstName: r.first_name,
    lastName: r.last_name,
    email: r.email,
    isEmailVerified: r.is_email_verified,
    organizationId: r.organization_id,
    currentProjectId: r.current_project_id,
  }
}

function toProject(r: Row): Project {
  return {
    id: r.id,
    uuid: r.uuid,
    organizationId: r.organization_id,
    organizationUuid: r.organization_uuid,
    name: r.name,
    apiToken: r.api_token,
    timezone: r.timezone,
    sessionRecording: readStoredRecordingSettings(r.session_recording),
    slackIncomingWebhook: r.slack_incoming_webhook ?? null,
    eventRetentionDays: r.event_retention_days ?? null,
    testAccountFilters: jsonList(r.test_account_filters),
    pathCleaningFilters: jsonList(r.path_cleaning_filters),
    anonymizeIps: r.anonymize_ips === true,
    geoipEnabled: r.geoip_enabled !== false,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    settings: sdkSettingsOfRow(r),
  }
}

/** A JSONB list column as read by PGlite or pg (parsed already; text on some drivers). */
function jsonList(v: unknown): unknown[] {
  const parsed = typeof v === 'string' ? JSON.parse(v) : v
  return Array.isArray(parsed) ? parsed : []
}

/** A user and their membership of the organization (1 member, 8 admin, 15 owner). */
export async function insertUser(q: SqlClient, organizationId: number, email: string, firstName: string, level: number): Promise<User> {
  refuseNul({ email, first_name: firstName })
  const uuid = newUuid()
  const [row] = await q.query(
    `INSERT INTO users (uuid, distinct_id, email, first_name, organization_id) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [uuid, uuid, email, firstName, organizationId],
  )
  await q.query('INSERT INTO organization_members (organization_id, user_id, level) VALUES ($1, $2, $3)', [organizationId, row.id, level])
  return toUser(row)
}

/** ProjectStore over any SqlClient (PGlite embedded, PostgreSQL at scale). */
export function createSqlProjectStore(db: SqlClient): ProjectStore {
  async function projectById(q: SqlClient, id: number): Promise<Project> {
    const [row] = await q.query(`SELECT ${PROJECT_COLUMNS} FROM ${PROJECT_FROM} WHERE p.id = $1`, [id])
    return toProject(row)
  }
  async function insertProject(q: SqlClient, organizationId: number, name: string, apiToken: string) {
    refuseNul({ name, api_token: apiToken })
    const [row] = await q.query<{ id: number }>(
      'INSERT INTO projects (uuid, organization_id, name, api_token) VALUES ($1, $2, $3, $4) RETURNING id',
      [newUuid(), organizationId, name, apiToken],
    )
    // Each organisation member at their organisation level (PostHog's UserTeamPermissions: without
    // project access control the effective level is the organisation's), never more.
    await q.query(
      `INSERT INTO project_members (project_id, user_id, level)
       SELECT $1, user_id, level FROM organization_members WHERE organization_id = $2 ON CONFLICT DO NOTHING`,
      [row.id, organizationId],
    )
    return projectById(q, row.id)
  }

  return {
    async isEmpty() {
      const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM organizations')
      return row.n === 0
    },
    async bootstrap(input: BootstrapInput) {
      return db.inTransaction(async (tx) => {
        const [org] = await tx.query('INSERT INTO organizations (uuid, name) VALUES ($1, $2) RETURNING id, uuid, name', [
          newUuid(),
          input.organizationName,
        ])
        const user = await insertUser(tx, org.id, input.user.email, input.user.firstName, 15)
        const project = await insertProject(tx, org.id, input.projectName, input.projectApiToken)
        await tx.query('UPDATE project_members SET level = 15 WHERE user_id = $1', [user.id])
        await tx.query('UPDATE users SET current_project_id = $1 WHERE id = $2', [project.id, user.id])
        await tx.query('INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value) VALUES ($1, $2, $3, $4)', [
          user.id,
          input.personalKey.label,
          input.personalKey.hash,
          input.personalKey.mask,
        ])
        return { organization: org as Organization, user: { ...user, currentProjectId: project.id }, project }
      })
    },
    async createProject({ organizationId, name, apiToken }) {
      return db.inTransaction((tx) => insertProject(tx, organizationId, name, apiToken))
    },
    async createUser({ organizationId, email, firstName, level = 1 }) {
      return db.inTransaction((tx) => insertUser(tx, organizationId, email, firstName, level))
    },
    async updateApiToken(projectId, apiToken) {
      refuseNul({ api_token: apiToken })
      await db.query('UPDATE projects SET api_token = $1, updated_at = now() WHERE id = $2', [apiToken, projectId])
      return projectById(db, projectId)
    },
    async updateSettings(projectId, input) {
      refuseNul({ name: input.name, timezone: input.timezone, slack_incoming_webhook: input.slackIncomingWebhook })
      // Column names come from SDK_SETTING_KEYS (never from the request); values are parameters.
      const sets = ['name = COALESCE($1, name)', 'timezone = COALESCE($2, timezone)', 'session_recording = COALESCE($4::jsonb, session_recording)', 'updated_at = now()']
      const params: unknown[] = [input.name ?? null, input.timezone ?? null, projectId, input.sessionRecording ? JSON.stringify(input.sessionRecording) : null]
      if (input.eventRetentionDays !== undefined) sets.push(`event_retention_days = $${params.push(input.eventRetentionDays)}`)
      if (input.testAccountFilters !== undefined) sets.push(`test_account_filters = $${params.push(JSON.stringify(input.testAccountFilters))}::jsonb`)
      if (input.pathCleaningFilters !== undefined) sets.push(`path_cleaning_filters = $${params.push(JSON.stringify(input.pathCleaningFilters))}::jsonb`)
      if (input.anonymizeIps !== undefined) sets.push(`anonymize_ips = $${params.push(input.anonymizeIps)}`)
      if (input.geoipEnabled !== undefined) sets.push(`geoip_enabled = $${params.push(input.geoipEnabled)}`)
      if (input.slackIncomingWebhook !== undefined) sets.push(`slack_incoming_webhook = $${params.push(input.slackIncomingWebhook)}`)
      for (const key of SDK_SETTING_KEYS) {
        if (input.sdk && key in input.sdk) sets.push(`${key} = $${params.push(input.sdk[key])}`)
      }
      await db.query(`UPDATE projects SET ${sets.join(', ')} WHERE id = $3`, params)
      return projectById(db, projectId)
    },
    async findProjectById(id) {
      const [row] = await db.query(`SELECT ${PROJECT_COLUMNS} FROM ${PROJECT_FROM} WHERE p.id = $1`, [id])
      return row ? toProject(row) : null
    },
    async projectsWithEvents(projectIds) {
      if (projectIds.length === 0) return new Set()
      // The definitions step records every event name a project receives, before the event is stored.
      const rows = await db.query<{ id: number }>(
        `SELECT id FROM unnest($1::int[]) AS u(id)
         WHERE EXISTS (SELECT 1 FROM event_definitions d WHERE d.project_id = u.id)`,
        [projectIds],
      )
      return new Set(rows.map((r) => r.id))
    },
    async addMember(projectId, userId, level) {
      await db.query(
        `INSERT INTO project_members (project_id, user_id, level) VALUES ($1, $2, $3)
         ON CONFLICT (project_id, user_id) DO UPDATE SET level = EXCLUDED.level`,
        [projectId, userId, level],
      )
      await db.query('UPDATE users SET current_project_id = $1 WHERE id = $2 AND current_project_id IS NULL', [projectId, userId])
    },
    async memberLevel(projectId, userId) {
      const [row] = await db.query<{ level: number }>('SELECT level FROM project_members WHERE project_id = $1 AND user_id = $2', [projectId, userId])
      return row?.level ?? null
    },
    async addPersonalKey(userId, key) {
      await db.query('INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value) VALUES ($1, $2, $3, $4)', [
        userId,
        key.label,
        key.hash,
        key.mask,
      ])
    },
    async findUserByPersonalKeyHash(hash) {
      if (cannotBeStored(hash)) return null
      const rows = await db.query(
        `UPDATE personal_api_keys k SET last_used_at = now()
         FROM users u WHERE k.secure_value = $1 AND u.id = k.user_id
           AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 hour')
         RETURNING u.*`,
        [hash],
      )
      if (rows[0]) return toUser(rows[0])
      const [row] = await db.query('SELECT u.* FROM personal_api_keys k JOIN users u ON u.id = k.user_id WHERE k.secure_value = $1', [hash])
      return row ? toUser(row) : null
    },
    async firstUser() {
      const [row] = await db.query('SELECT * FROM users ORDER BY id LIMIT 1')
      return row ? toUser(row) : null
    },
    async listProjects() {
      return (await db.query(`SELECT ${PROJECT_COLUMNS} FROM ${PROJECT_FROM} ORDER BY p.id`)).map(toProject)
    },
    async listProjectsOfUser(userId) {
      const rows = await db.query(
        `SELECT ${PROJECT_COLUMNS} FROM ${PROJECT_FROM} JOIN project_members m ON m.project_id = p.id
         WHERE m.user_id = $1 ORDER BY p.id`,
        [userId],
      )
      return rows.map(toProject)
    },
    async findProjectOfUser(userId, projectId) {
      const [row] = await db.query(
        `SELECT ${PROJECT_COLUMNS} FROM ${PROJECT_FROM} JOIN project_members m ON m.project_id = p.id
         WHERE m.user_id = $1 AND p.id = $2`,
        [userId, projectId],
      )
      return row ? toProject(row) : null
    },
    async findProjectByToken(token) {
      if (cannotBeStored(token)) return null
      const [row] = await db.query(`SELECT ${PROJECT_COLUMNS} FROM ${PROJECT_FROM} WHERE p.api_token = $1`, [token])
      return row ? toProject(row) : null
    },
    async findUserById(id) {
      const [row] = await db.query('SELECT * FROM users WHERE id = $1', [id])
      return row ? toUser(row) : null
    },
  }
}
