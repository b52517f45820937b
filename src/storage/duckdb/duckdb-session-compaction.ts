import type { DuckDBConnection } from '@duckdb/node-api'
import type { SessionCompactionStore } from '../../modules/session-aggregate/session-compaction-store.ts'
import { END_PROPERTIES, ENTRY_PROPERTIES, SESSION_PARTIAL_COLUMNS } from '../../domain/web/session-partials.ts'
import { serializeSessionRewrite } from './duckdb-sessions.ts'

const KEYS = 'compact_session_keys'
const MERGED = 'compact_session_rows'
const COLUMNS = SESSION_PARTIAL_COLUMNS.join(', ')
const FIRST = ENTRY_PROPERTIES.map(([name]) => `first_${name}`)
const LAST = ['last_distinct_id', ...END_PROPERTIES.map(([name]) => `last_${name}`)]

/**
 * The merged row of each session of `KEYS`, with the columns of `sessions` in their order. The entry
 * fields come from one partial (the least `min_ms`'s, as a list), and the end fields with the distinct
 * id from one (the greatest `max_ms`'s): where two partials share an instant, the row keeps one
 * partial's fields together rather than a mix.
 */
const MERGE_SQL = `
  SELECT project_id, session_id, min_ms, max_ms, l[1] AS last_distinct_id,
    ${FIRST.map((c, i) => `f[${i + 1}] AS ${c}`).join(', ')},
    ${LAST.slice(1).map((c, i) => `l[${i + 2}] AS ${c}`).join(', ')},
    pageviews, autocaptures, screens
  FROM (
    SELECT s.project_id, s.session_id, min(s.min_ms) AS min_ms, max(s.max_ms) AS max_ms,
      arg_min([${FIRST.map((c) => `s.${c}`).join(', ')}], s.min_ms) AS f,
      arg_max([${LAST.map((c) => `s.${c}`).join(', ')}], s.max_ms) AS l,
      sum(s.pageviews)::BIGINT AS pageviews, sum(s.autocaptures)::BIGINT AS autocaptures, sum(s.screens)::BIGINT AS screens
    FROM sessions s JOIN ${KEYS} k ON s.project_id = k.project_id AND s.session_id = k.session_id
    GROUP BY s.project_id, s.session_id
  )`

/**
 * The sessions aggregate's compaction on DuckDB, on a connection of its own: a step picks at most
 * `limit` sessions with more than one partial, and in one transaction computes their merged rows,
 * deletes their partials and inserts the merged rows. Ingestion appends partials on its own
 * connection meanwhile and never waits: the step's transaction sees a snapshot, so its DELETE removes
 * only the partials it merged, and a partial committed meanwhile stays beside the merged row (a later
 * step merges the two; queries merge them the same way until then). `beforeDelete` is for tests: it
 * runs inside the transaction, once the merged rows are computed, before the partials are deleted.
 */
export function createDuckDbSessionCompaction(c: DuckDBConnection, opts: { beforeDelete?: () => Promise<void> } = {}): SessionCompactionStore {
  async function step(limit: number) {
    await c.run('BEGIN TRANSACTION')
    try {
      // The sessions to merge: any with more than one partial (a scan of the narrow table's two key columns).
      await c.run(
        `CREATE OR REPLACE TEMP TABLE ${KEYS} AS
         SELECT project_id, session_id FROM sessions GROUP BY project_id, session_id HAVING count(*) > 1 LIMIT $1::BIGINT`,
        [limit],
      )
      await c.run(`CREATE OR REPLACE TEMP TABLE ${MERGED} AS ${MERGE_SQL}`)
      const sessions = Number((await c.runAndReadAll(`SELECT count(*)::DOUBLE FROM ${MERGED}`)).getColumnsJS()[0]![0])
      if (opts.beforeDelete) await opts.beforeDelete()
      const deleted = Number((await c.run(
        `DELETE FROM sessions USING ${KEYS} k WHERE sessions.project_id = k.project_id AND sessions.session_id = k.session_id`,
      )).rowsChanged)
      await c.run(`INSERT INTO sessions (${COLUMNS}) SELECT ${COLUMNS} FROM ${MERGED}`)
      await c.run(`DROP TABLE ${MERGED}`)
      await c.run(`DROP TABLE ${KEYS}`)
      await c.run('COMMIT')
      const partials = Number((await c.runAndReadAll('SELECT count(*)::DOUBLE FROM sessions')).getColumnsJS()[0]![0])
      return { sessions, removedPartials: deleted - sessions, partials, more: sessions >= limit }
    } catch (err) {
      await c.run('ROLLBACK').catch(() => undefined)
      throw err
    }
  }
  return {
    compactStep: (limit) => serializeSessionRewrite(() => step(limit)),
  }
}
