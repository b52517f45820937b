import type { AuthStore } from '../../modules/auth/auth-store.ts'
import type { Invite, Member, PersonalKey } from '../../modules/auth/auth-types.ts'
import type { User } from '../../modules/projects/project-types.ts'
import { newUuid } from '../../shared/ids.ts'
import type { SqlClient } from './sql-client.ts'
import { selectPage } from './sql-page.ts'
import { toUser } from './sql-project-store.ts'
import { cannotBeStored, refuseNul } from './sql-text.ts'

type Row = Record<string, any>

// A user's columns prefixed `u_` next to another table's (members, invites' creator).
const USER_AS = `u.id AS u_id, u.uuid AS u_uuid, u.distinct_id AS u_distinct_id, u.first_name AS u_first_name,
  u.last_name AS u_last_name, u.email AS u_email, u.is_email_verified AS u_is_email_verified,
  u.organization_id AS u_organization_id, u.current_project_id AS u_current_project_id`

function prefixedUser(r: Row): User {
  const picked: Row = {}
  for (const [k, v] of Object.entries(r)) if (k.startsWith('u_')) picked[k.slice(2)] = v
  return toUser(picked)
}

export function toMember(r: Row): Member {
  return { id: r.id, user: prefixedUser(r), level: r.level, joinedAt: new Date(r.joined_at), updatedAt: new Date(r.updated_at) }
}

function toInvite(r: Row): Invite {
  return {
    id: r.id,
    organizationId: r.organization_id,
    targetEmail: r.target_email,
    level: r.level,
    createdBy: r.u_id == null ? null : prefixedUser(r),
    createdAt: new Date(r.created_at),
    expiresAt: new Date(r.expires_at),
  }
}

function toPersonalKey(r: Row): PersonalKey {
  return {
    id: r.id,
    label: r.label,
    maskValue: r.mask_value,
    createdAt: new Date(r.created_at),
    lastUsedAt: r.last_used_at ? new Date(r.last_used_at) : null,
  }
}

export const MEMBER_SELECT = `SELECT m.id, m.level, m.joined_at, m.updated_at, ${USER_AS}
  FROM organization_members m JOIN users u ON u.id = m.user_id`
const INVITE_SELECT = `SELECT i.*, ${USER_AS} FROM organization_invites i LEFT JOIN users u ON u.id = i.created_by`

type MemberQueries = Pick<
  AuthStore,
  | 'createInvite' | 'listInvites' | 'deleteInvitesTo' | 'deleteInvite' | 'findInvite'
  | 'listMembers' | 'findMember' | 'countOwners' | 'setMemberLevel' | 'removeMember'
  | 'listPersonalKeys' | 'addPersonalKey' | 'deletePersonalKey'
>

/** The organization side of the AuthStore: invites, members and personal keys. */
export function sqlMemberQueries(db: SqlClient): MemberQueries {
  async function memberById(q: SqlClient, organizationId: number, userId: number): Promise<Member> {
    const [row] = await q.query(`${MEMBER_SELECT} WHERE m.organization_id = $1 AND m.user_id = $2`, [organizationId, userId])
    return toMember(row)
  }

  return {
    async createInvite(input) {
      refuseNul({ target_email: input.targetEmail })
      const id = newUuid()
      await db.query(
        `INSERT INTO organization_invites (id, organization_id, token_hash, target_email, level, created_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [id, input.organizationId, input.tokenHash, input.targetEmail, input.level, input.createdBy, input.expiresAt],
      )
      const [row] = await db.query(`${INVITE_SELECT} WHERE i.id = $1`, [id])
      return toInvite(row)
    },
    async listInvites(organizationId, page) {
      return selectPage(db, {
        from: 'organization_invites i',
        select: INVITE_SELECT,
        where: 'i.organization_id = $1 AND i.used_at IS NULL',
        params: [organizationId],
        orderBy: 'i.created_at DESC, i.id',
        page,
        map: toInvite,
      })
    },
    async deleteInvitesTo(organizationId, targetEmail) {
      await db.query('DELETE FROM organization_invites WHERE organization_id = $1 AND lower(target_email) = $2 AND used_at IS NULL', [
        organizationId,
        targetEmail,
      ])
    },
    async deleteInvite(organizationId, id) {
      const rows = await db.query('DELETE FROM organization_invites WHERE organization_id = $1 AND id = $2 AND used_at IS NULL RETURNING id', [
        organizationId,
        id,
      ])
      return rows.length > 0
    },
    async findInvite(tokenHash, now) {
      if (cannotBeStored(tokenHash)) return null
      const [row] = await db.query(
        `SELECT i.*, o.name AS organization_name, ${USER_AS} FROM organization_invites i
         JOIN organizations o ON o.id = i.organization_id LEFT JOIN users u ON u.id = i.created_by
         WHERE i.token_hash = $1 AND i.used_at IS NULL AND i.expires_at > $2`,
        [tokenHash, now],
      )
      return row ? { ...toInvite(row), organizationName: row.organization_name } : null
    },
    async listMembers(organizationId, page) {
      return selectPage(db, {
        from: 'organization_members m',
        select: MEMBER_SELECT,
        where: 'm.organization_id = $1',
        params: [organizationId],
        orderBy: 'm.joined_at, m.user_id',
        page,
        map: toMember,
      })
    },
    async findMember(organizationId, userUuid) {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(userUuid)) return null
      const [row] = await db.query(`${MEMBER_SELECT} WHERE m.organization_id = $1 AND u.uuid = $2`, [organizationId, userUuid])
      return row ? toMember(row) : null
    },
    async countOwners(organizationId) {
      const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM organization_members WHERE organization_id = $1 AND level = 15', [
        organizationId,
      ])
      return row.n
    },
    async setMemberLevel(organizationId, userId, level) {
      return db.inTransaction(async (tx) => {
        await tx.query('UPDATE organization_members SET level = $3, updated_at = now() WHERE organization_id = $1 AND user_id = $2', [
          organizationId,
          userId,
          level,
        ])
        await tx.query('UPDATE project_members SET level = $3 WHERE user_id = $2 AND project_id IN (SELECT id FROM projects WHERE organization_id = $1)', [
          organizationId,
          userId,
          level,
        ])
        return memberById(tx, organizationId, userId)
      })
    },
    async removeMember(organizationId, userId) {
      await db.inTransaction(async (tx) => {
        await tx.query('DELETE FROM organization_members WHERE organization_id = $1 AND user_id = $2', [organizationId, userId])
        await tx.query('DELETE FROM project_members WHERE user_id = $2 AND project_id IN (SELECT id FROM projects WHERE organization_id = $1)', [
          organizationId,
          userId,
        ])
        await tx.query('DELETE FROM sessions WHERE user_id = $1', [userId])
        await tx.query('DELETE FROM personal_api_keys WHERE user_id = $1', [userId])
      })
    },

    async listPersonalKeys(userId) {
      return (await db.query('SELECT * FROM personal_api_keys WHERE user_id = $1 ORDER BY created_at DESC, id DESC', [userId])).map(toPersonalKey)
    },
    async addPersonalKey(userId, key) {
      refuseNul({ label: key.label })
      const [row] = await db.query('INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value) VALUES ($1, $2, $3, $4) RETURNING *', [
        userId,
        key.label,
        key.hash,
        key.mask,
      ])
      return toPersonalKey(row)
    },
    async deletePersonalKey(userId, id) {
      return (await db.query('DELETE FROM personal_api_keys WHERE user_id = $1 AND id = $2 RETURNING id', [userId, id])).length > 0
    },
  }
}
