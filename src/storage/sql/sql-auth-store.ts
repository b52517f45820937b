import type { AuthStore } from '../../modules/auth/auth-store.ts'
import type { Membership, MembershipLevel, NewAccount } from '../../modules/auth/auth-types.ts'
import type { User } from '../../modules/projects/project-types.ts'
import { validationError } from '../../shared/errors.ts'
import { sqlMemberQueries } from './sql-auth-members.ts'
import type { SqlClient } from './sql-client.ts'
import { insertUser, toUser } from './sql-project-store.ts'
import { cannotBeStored, refuseNul } from './sql-text.ts'

type Row = Record<string, any>

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

    ...sqlMemberQueries(db),
  }
}
