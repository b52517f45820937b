import { identifier } from './open-clickhouse-url.ts'
import { stringLiteral } from './clickhouse-literals.ts'

/**
 * The replicated form of a migration statement for `TALLY_CLICKHOUSE_CLUSTER` (docs/clickhouse.md,
 * "Replicas"). The migration files are written once, for one server; on a cluster each statement
 * becomes:
 * - `CREATE TABLE IF NOT EXISTS t (...) ENGINE = [Replacing]MergeTree[(args)] ...` →
 *   `CREATE TABLE IF NOT EXISTS db.t ON CLUSTER c (...) ENGINE = Replicated[Replacing]MergeTree(
 *   '/clickhouse/tables/{shard}/db/t', '{replica}'[, args]) ...`: every replica of the cluster
 *   creates it (ClickHouse's DDL queue in ZooKeeper; a replica down now runs it when it is back), and
 *   the replicas of a shard share one ZooKeeper path: inserts, merges and mutations replicate;
 * - `ALTER TABLE t ...` → `ALTER TABLE db.t ON CLUSTER c ...` (ClickHouse runs it once per shard on a
 *   replicated table; the change replicates);
 * - `DROP TABLE IF EXISTS t` → `DROP TABLE IF EXISTS db.t ON CLUSTER c`;
 * - `CREATE MATERIALIZED VIEW IF NOT EXISTS v TO t AS SELECT ... FROM s ...` → the same ON CLUSTER
 *   with the tables qualified: every replica's view writes the blocks inserted on that replica into
 *   the replicated `t` (blocks a replica fetches from another are not seen by its view, so each row
 *   is written once);
 * - `INSERT INTO t SELECT ... FROM s ...` (a backfill) → qualified, run once: the replicated `t`
 *   copies the rows to the other replicas.
 * Names are qualified: an ON CLUSTER statement without a database runs in each host's `default`.
 * Any other statement is refused, so that a new migration gets its cluster form written here.
 */
export function clusterStatement(statement: string, database: string, cluster: string): string {
  const db = identifier(database)
  const on = `ON CLUSTER ${identifier(cluster)}`
  const create = /^CREATE TABLE IF NOT EXISTS (\w+)\s*\(/.exec(statement)
  if (create) {
    const table = create[1]!
    const engine = /ENGINE = (Replacing)?MergeTree(?:\(([^)]*)\))?/
    const m = engine.exec(statement)
    if (!m) throw new Error(`migration statement for ${table} has no MergeTree engine to replicate: ${statement.slice(0, 80)}`)
    const zkPath = stringLiteral(`/clickhouse/tables/{shard}/${database}/${table}`)
    const args = [zkPath, `'{replica}'`, ...(m[2]?.trim() ? [m[2].trim()] : [])].join(', ')
    return statement
      .replace(create[0], `CREATE TABLE IF NOT EXISTS ${db}.${table} ${on} (`)
      .replace(engine, `ENGINE = Replicated${m[1] ?? ''}MergeTree(${args})`)
  }
  const view = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\s/.exec(statement)
  if (view) {
    return qualifiedFrom(statement.replace(view[0], `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${view[1]} ${on} TO ${db}.${view[2]} AS `), db)
  }
  const insert = /^INSERT INTO (\w+)\s/.exec(statement)
  if (insert) return qualifiedFrom(statement.replace(insert[0], `INSERT INTO ${db}.${insert[1]} `), db)
  const alter = /^(ALTER TABLE|DROP TABLE IF EXISTS) (\w+)/.exec(statement)
  if (alter) return statement.replace(alter[0], `${alter[1]} ${db}.${alter[2]} ${on}`)
  throw new Error(`migration statement has no cluster form (open-clickhouse-cluster.ts): ${statement.slice(0, 80)}`)
}

/** The statement's `FROM table` (one, unqualified) in the database. */
function qualifiedFrom(statement: string, db: string): string {
  return statement.replace(/\bFROM (\w+)\b/, (_, table: string) => `FROM ${db}.${table}`)
}

/** `CREATE DATABASE` for the database of Tally's tables, on every replica of `cluster` when given. */
export function createDatabaseStatement(database: string, cluster: string | null): string {
  return `CREATE DATABASE IF NOT EXISTS ${identifier(database)}${cluster ? ` ON CLUSTER ${identifier(cluster)}` : ''}`
}

/**
 * Whether a failed DDL statement left the schema as wanted anyway: a column added by another
 * process starting at the same time (18.16 has no `ADD COLUMN IF NOT EXISTS`), or an ON CLUSTER
 * statement that every replica alive ran while the ones down have not yet (ClickHouse's
 * `distributed_ddl_task_timeout` message says how many of the unfinished hosts are active; a replica
 * that is down runs the queued statement, in order, when it is back).
 */
export function ddlAlreadyDone(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err)
  if (/column with this name already exists/.test(message)) return true
  return /There are \d+ unfinished hosts \(0 of them are currently active\)/.test(message)
}
