import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import { createAuthService, DEFAULT_AUTH_SETTINGS } from '../../src/modules/auth/auth-service.ts'
import { createProjectService } from '../../src/modules/projects/project-service.ts'
import { manualClock } from '../../src/shared/clock.ts'
import { openPgliteSqlClient } from '../../src/storage/pglite/pglite-sql-client.ts'
import { createSqlAuthStore } from '../../src/storage/sql/sql-auth-store.ts'
import { createSqlProjectStore } from '../../src/storage/sql/sql-project-store.ts'
import { runMigrations } from '../../src/storage/sql/run-migrations.ts'

const HOUR = 3_600_000
const DAY = 24 * HOUR

// The auth service on a real (embedded) metadata store, with a clock that moves only when told:
// session lifetimes and sign-in windows without waiting for them.
async function authOn(t: { after(fn: () => Promise<void>): void }) {
  const db = await openPgliteSqlClient('memory://')
  t.after(() => db.close())
  await runMigrations(db, MIGRATIONS.metadata)
  const projects = createProjectService(createSqlProjectStore(db))
  await projects.bootstrap({ projectApiKey: null, personalApiKey: null })
  const clock = manualClock(Date.parse('2026-03-01T00:00:00Z'))
  const auth = createAuthService({ store: createSqlAuthStore(db), projects, settings: DEFAULT_AUTH_SETTINGS, clock })
  const token = await auth.createSetupToken()
  await auth.completeSetup({ token, email: 'o@example.com', password: 'long enough', firstName: 'O' })
  return { auth, clock }
}

test('sessions: a session unused for 14 days ends; each use pushes the end back (at most one write an hour)', async (t) => {
  const { auth, clock } = await authOn(t)
  const { token } = await auth.login({ email: 'o@example.com', password: 'long enough', clientIp: '1' })
  clock.advance(13 * DAY)
  const used = await auth.authenticateSession(token)
  assert.equal(used?.extended, true, 'the cookie is sent again with the new end')
  clock.advance(10 * 60_000)
  assert.equal((await auth.authenticateSession(token))?.extended, false, 'within the hour: no write')
  clock.advance(13 * DAY)
  assert.ok(await auth.authenticateSession(token), '26 days after sign-in, 13 after the last use: alive')
  clock.advance(14 * DAY + 1)
  assert.equal(await auth.authenticateSession(token), null, '14 days unused: ended')
})

test('sign-in limits: failures leave the window after 15 minutes; success clears the e-mail count', async (t) => {
  const { auth, clock } = await authOn(t)
  const attempt = (password: string, clientIp = '10.0.0.1') => auth.login({ email: 'o@example.com', password, clientIp })
  for (let i = 0; i < 4; i++) await assert.rejects(attempt('wrong password', `10.0.0.${i}`), { code: 'invalid_credentials' })
  assert.ok(await attempt('long enough', '10.0.1.1'), 'four failures: still allowed')
  for (let i = 0; i < 5; i++) await assert.rejects(attempt('wrong password', `10.0.2.${i}`), { code: 'invalid_credentials' })
  await assert.rejects(attempt('long enough', '10.0.3.1'), { code: 'throttled' })
  clock.advance(15 * 60_000 - 1000)
  await assert.rejects(attempt('long enough', '10.0.3.1'), { code: 'throttled' })
  clock.advance(1000)
  assert.ok(await attempt('long enough', '10.0.3.1'), 'the window passed')
})
