import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { MIGRATIONS } from '../../app/create-adapters.ts'
import { sessionPartialsSql } from './clickhouse-sessions.ts'
import { clusterStatement } from './open-clickhouse-cluster.ts'

// The migration is a fixed file (checksummed once applied); the rebuilds after deletions write partials
// with sessionPartialsSql. Both must be the same definition of a partial.
const migration = readFileSync(`${MIGRATIONS.clickhouse}/0012-sessions.sql`, 'utf8')

test('the sessions view and backfill of migration 0012 are sessionPartialsSql()', () => {
  assert.ok(migration.includes(`CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv TO sessions AS\n${sessionPartialsSql()};\n`))
  assert.ok(migration.includes(`INSERT INTO sessions\n${sessionPartialsSql()};\n`))
})

test('on a cluster the view and the backfill name the database', () => {
  const view = clusterStatement(`CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv TO sessions AS\n${sessionPartialsSql()}`, 'tally', 'c1')
  assert.match(view, /^CREATE MATERIALIZED VIEW IF NOT EXISTS `?tally`?\.sessions_mv ON CLUSTER `?c1`? TO `?tally`?\.sessions AS /)
  assert.match(view, /\nFROM `?tally`?\.events\n/)
  const fill = clusterStatement(`INSERT INTO sessions\n${sessionPartialsSql()}`, 'tally', 'c1')
  assert.match(fill, /^INSERT INTO `?tally`?\.sessions SELECT /)
  assert.match(fill, /\nFROM `?tally`?\.events\n/)
})
