import assert from 'node:assert/strict'
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import { openPgliteSqlClient } from '../../src/storage/pglite/pglite-sql-client.ts'
import { runMigrations } from '../../src/storage/sql/run-migrations.ts'

test('migration 0006 on a data dir made before it: every user gets the organization level of their current project', async (t) => {
  const before = await mkdtemp(path.join(os.tmpdir(), 'tally-mig-'))
  t.after(() => rm(before, { recursive: true, force: true }))
  for (const f of (await readdir(MIGRATIONS.metadata)).filter((f) => f < '0006')) await copyFile(path.join(MIGRATIONS.metadata, f), path.join(before, f))
  const db = await openPgliteSqlClient('memory://')
  t.after(() => db.close())
  await runMigrations(db, before)
  // What the project store wrote before 0006: the owner at 15, a CLI user at 1, a user with no project.
  await db.exec(`
    INSERT INTO organizations (id, uuid, name) VALUES (1, '00000000-0000-4000-8000-000000000001', 'Org');
    INSERT INTO users (id, uuid, distinct_id, email, organization_id) VALUES
      (1, '00000000-0000-4000-8000-000000000011', 'a', 'owner@tally.local', 1),
      (2, '00000000-0000-4000-8000-000000000012', 'b', 'cli@example.com', 1),
      (3, '00000000-0000-4000-8000-000000000013', 'c', 'none@example.com', 1);
    INSERT INTO projects (id, uuid, organization_id, name, api_token) VALUES
      (1, '00000000-0000-4000-8000-000000000021', 1, 'P', 'phc_a'), (2, '00000000-0000-4000-8000-000000000022', 1, 'Q', 'phc_b');
    UPDATE users SET current_project_id = 1 WHERE id = 1;
    UPDATE users SET current_project_id = 2 WHERE id = 2;
    INSERT INTO project_members (project_id, user_id, level) VALUES (1, 1, 15), (2, 1, 8), (1, 2, 8), (2, 2, 1);
  `)
  assert.deepEqual(await runMigrations(db, MIGRATIONS.metadata).then((ran) => ran.filter((f) => f.startsWith('0006'))), ['0006-accounts-sessions-invites.sql'])
  const levels = await db.query<{ user_id: number; level: number }>('SELECT user_id, level FROM organization_members ORDER BY user_id')
  assert.deepEqual(levels.map((r) => [r.user_id, r.level]), [[1, 15], [2, 1], [3, 1]])
  const [ids] = await db.query<{ n: number }>('SELECT count(DISTINCT id)::int AS n FROM organization_members')
  assert.equal(ids.n, 3, 'each membership has its own id')
})
