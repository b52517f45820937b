import type { AuthStore } from '../../modules/auth/auth-store.ts'
import type { Invite, Member, Membership, MembershipLevel, NewAccount, PersonalKey } from '../../modules/auth/auth-types.ts'
import type { User } from '../../modules/projects/project-types.ts'
import { newUuid } from '../../shared/ids.ts'
import { validationError } from '../../shared/errors.ts'
import type { SqlClient } from './sql-client.ts'
import { selectPage } from './sql-page.ts'
import { insertUser, toUser } from './sql-project-store.ts'
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

function toMember(r: Row): Member {
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

const MEMBER_SELECT = `SELECT m.id, m.level, m.joined_at, m.updated_at, ${USER_AS}
  FROM organization_members m JOIN users u ON u.id = m.user_id`
const INVITE_SELECT = `SELECT i.*, ${USER_AS} FROM organization_invites i LEFT JOIN users u ON u.id = i.created_by`

/** The same e-mail taken by another account (a concurrent sign-up): PostHog's 400 on `email`. */
function refuseTakenEmail(err: unknown): never {
  if ((err as { code?: string }).code === '23505') throw validationError('email', 'There is already an account with this email address.', 'unique')
  throw err
}

/** Gives the user access to every project of the organization at `level` and makes one of them current. */
async function joinProjects(q: SqlClient, organizationId: number, userId: number, level: MembershipLevel): Promise<void> {
  await q.query(
    `INSERT INTO project_members (project_id, user_id, level) SELECT id, $2, $3 FROM projects WHERE organization_id = $1
     ON CONFLICT (project_id, user_id) DO UPDATE SET level = EXCLUDED.level`,
    [organizationId, userId, level],
  )
  await q.query(
    `UPDATE users SET current_project_id = (SELECT min(id) FROM projects WHERE organization_id = $1)
     WHERE id = $2 AND (current_project_id IS NULL OR current_project_id NOT IN (SELECT id FROM projects WHERE organization_id = $1))`,
    [organizationId, userId],
  )
}

async function addAccount(q: SqlClient, organizationId: number, input: NewAccount): Promise<User> {
  refuseNul({ email: input.email, first_name: input.firstName })
  const [existing] = await q.query('SELECT * FROM users WHERE lower(email) = $1', [input.email])
  let userId: number
  if (existing) {
    // Someone who left (was removed): taken back into the organization, not duplicated.
    const [member] = await q.query('SELECT 1 FROM organization_members WHERE user_id = $1', [existing.id])
    if (member) throw validationError('email', 'There is already an account with this email address.', 'unique')
    await q.query('UPDATE users SET first_name = $2, password_hash = $3, organization_id = $4 WHERE id = $1', [
      existing.id,
      input.firstName,
      input.passwordHash,
      organizationId,
    ])
    await q.query('INSERT INTO organization_members (organization_id, user_id, level) VALUES ($1, $2, $3)', [organizationId, existing.id, input.level])
    userId = existing.id
  } else {
    const user = await insertUser(q, organizationId, input.email, input.firstName, input.level).catch(refuseTakenEmail)
    await q.query('UPDATE users SET password_hash = $2 WHERE id = $1', [user.id, input.passwordHash])
    userId = user.id
  }
  await joinProjects(q, organizationId, userId, input.level)
  const [row] = await q.query('SELECT * FROM users WHERE id = $1', [userId])
  return toUser(row)
}

/** AuthStore over any SqlClient (PGlite embedded, PostgreSQL at scale). */
export function createSqlAuthStore(db: SqlClient): AuthStore {
  async function memberById(q: SqlClient, organizationId: number, userId: number): Promise<Member> {
    const [row] = await q.query(`${MEMBER_SELECT} WHERE m.organization_id = $1 AND m.user_id = $2`, [organizationId, userId])
    return toMember(row)
  }

  return {
    async findCredentials(email) {
      if (cannotBeStored(email)) return null
      const [row] = await db.query(
        `SELECT u.* FROM users u WHERE lower(u.email) = $1 AND EXISTS (SELECT 1 FROM organization_members m WHERE m.user_id = u.id)`,
        [email],
      )
      return row ? { user: toUser(row), passwordHash: row.password_hash ?? null } : null
    },
    async findUserByEmail(email) {
      if (cannotBeStored(email)) return null
      const [row] = await db.query('SELECT * FROM users WHERE lower(email) = $1', [email])
      return row ? toUser(row) : null
    },
    async findMembership(userId): Promise<Membership | null> {
      const [row] = await db.query(
        `SELECT m.id, m.organization_id, o.uuid AS organization_uuid, o.name AS organization_name, m.level, m.joined_at, m.updated_at
         FROM organization_members m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = $1 ORDER BY m.joined_at LIMIT 1`,
        [userId],
      )
      if (!row) return null
      return {
        id: row.id,
        organizationId: row.organization_id,
        organizationUuid: row.organization_uuid,
        organizationName: row.organization_name,
        level: row.level,
        joinedAt: new Date(row.joined_at),
        updatedAt: new Date(row.updated_at),
      }
    },
    async hasPassword(userId) {
      const [row] = await db.query('SELECT password_hash IS NOT NULL AS has FROM users WHERE id = $1', [userId])
      return row?.has === true
    },
    async setFirstName(userId, firstName) {
      refuseNul({ first_name: firstName })
      const [row] = await db.query('UPDATE users SET first_name = $2 WHERE id = $1 RETURNING *', [userId, firstName])
      return toUser(row)
    },
    async setPassword(userId, passwordHash) {
      await db.inTransaction(async (tx) => {
        await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, passwordHash])
        await tx.query('DELETE FROM sessions WHERE user_id = $1', [userId])
      })
    },

    async createSession(userId, tokenHash, expiresAt) {
      await db.query('INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [tokenHash, userId, expiresAt])
    },
    async findSession(tokenHash, now) {
      if (cannotBeStored(tokenHash)) return null
      const [row] = await db.query(
        `SELECT s.id AS session_id, s.expires_at AS session_expires_at, u.* FROM sessions s JOIN users u ON u.id = s.user_id
         WHERE s.token_hash = $1 AND s.expires_at > $2 AND EXISTS (SELECT 1 FROM organization_members m WHERE m.user_id = u.id)`,
        [tokenHash, now],
      )
      return row ? { id: row.session_id, expiresAt: new Date(row.session_expires_at), user: toUser(row) } : null
    },
    async extendSession(id, expiresAt) {
      await db.query('UPDATE sessions SET expires_at = $2 WHERE id = $1', [id, expiresAt])
    },
    async deleteSession(tokenHash) {
      if (cannotBeStored(tokenHash)) return
      await db.query('DELETE FROM sessions WHERE token_hash = $1', [tokenHash])
    },

    async createSetupToken(userId, tokenHash, expiresAt) {
      await db.query('INSERT INTO setup_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [tokenHash, userId, expiresAt])
    },
    async findSetupToken(tokenHash, now) {
      if (cannotBeStored(tokenHash)) return null
      const [row] = await db.query(
        `SELECT u.* FROM setup_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1 AND t.used_at IS NULL AND t.expires_at > $2`,
        [tokenHash, now],
      )
      return row ? toUser(row) : null
    },
    async completeSetup(tokenHash, now, input) {
      if (cannotBeStored(tokenHash)) return null
      refuseNul({ email: input.email, first_name: input.firstName })
      return db.inTransaction(async (tx) => {
        const [used] = await tx.query<{ user_id: number }>(
          `UPDATE setup_tokens SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id`,
          [tokenHash, now],
        )
        if (!used) return null
        const [taken] = await tx.query('SELECT 1 FROM users WHERE lower(email) = $1 AND id <> $2', [input.email, used.user_id])
        if (taken) throw validationError('email', 'There is already an account with this email address.', 'unique')
        const [row] = await tx
          .query('UPDATE users SET email = $2, first_name = $3, password_hash = $4 WHERE id = $1 RETURNING *', [
            used.user_id,
            input.email,
            input.firstName,
            input.passwordHash,
          ])
          .catch(refuseTakenEmail)
        await tx.query('DELETE FROM sessions WHERE user_id = $1', [used.user_id])
        return toUser(row)
      })
    },

    async createAccount(organizationId, input) {
      return db.inTransaction((tx) => addAccount(tx, organizationId, input))
    },

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
    async signUpWithInvite(tokenHash, now, input) {
      if (cannotBeStored(tokenHash)) return null
      return db.inTransaction(async (tx) => {
        const [invite] = await tx.query(
          `UPDATE organization_invites SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
           RETURNING organization_id, level`,
          [tokenHash, now],
        )
        if (!invite) return null
        return addAccount(tx, invite.organization_id, { ...input, level: invite.level })
      })
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
