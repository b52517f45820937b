import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api'
import type { QueryEngine, QueryRows, RunGuards } from '../../modules/query/query-engine.ts'
import { AppError } from '../../shared/errors.ts'
import { runHogQL } from '../event-sql/hogql/run-hogql.ts'
import { duckDbHogQLDialect } from './duckdb-hogql-dialect.ts'
import type { Plan } from '../../domain/query/query-plan.ts'
import { compilePlan } from '../event-sql/compile-plan.ts'
import { duckDbEventDialect } from './duckdb-event-dialect.ts'
import { queryErrorOf } from './duckdb-query-errors.ts'

/**
 * Query runners' statements on a small pool of DuckDB connections of their own (never the
 * ingestion writer's). A statement past its time limit, or whose client went away, is interrupted
 * in DuckDB (`connection.interrupt()`), which frees the connection for the next one.
 */
export function createDuckDbQueryEngine(connect: () => Promise<DuckDBConnection>, engineOpts: { poolSize: number; memoryLimit?: string | null }): QueryEngine {
  const idle: DuckDBConnection[] = []
  const waiting: Array<(c: DuckDBConnection) => void> = []
  let opened = 0

  async function acquire(): Promise<DuckDBConnection> {
    const free = idle.pop()
    if (free) return free
    if (opened < engineOpts.poolSize) {
      opened++
      try {
        const c = await connect()
        // Buckets and labels are computed in the project's zone explicitly; the session zone must not leak in.
        await c.run(`SET TimeZone = 'UTC'`)
        return c
      } catch (err) {
        opened--
        throw err
      }
    }
    return new Promise((resolve) => waiting.push(resolve))
  }

  function release(c: DuckDBConnection): void {
    const next = waiting.shift()
    if (next) next(c)
    else idle.push(c)
  }

  async function runSql(sql: string, values: readonly (string | number | boolean | null)[], guards: RunGuards, opts: { deep?: boolean } = {}): Promise<QueryRows> {
    if (guards.signal?.aborted) throw new AppError('validation_error', 'The query was cancelled.', 'query')
    const c = await acquire()
    if (opts.deep) await c.run(`SET disabled_optimizers = 'filter_pushdown'`)
    let timedOut = false
    const interrupt = () => c.interrupt()
    const timer = setTimeout(() => {
      timedOut = true
      c.interrupt()
    }, guards.timeoutMs)
    guards.signal?.addEventListener('abort', interrupt, { once: true })
    try {
      const reader = await c.runAndReadAll(sql, values as DuckDBValue[])
      const columns = reader.columnNames()
      const types = reader.columnTypes().map((t) => t.toString())
      const rows = reader.getRowObjectsJS().map(toPlainRow)
      if (rows.length > guards.maxRows) {
        throw new AppError('validation_error', `The query returns more than ${guards.maxRows} rows (TALLY_QUERY_MAX_ROWS): narrow it (date range, breakdown limit, LIMIT).`, 'query', { subCode: 'query_row_limit' })
      }
      return { columns, types, rows }
    } catch (err) {
      if (timedOut) throw new AppError('query_timeout', `The query ran longer than ${guards.timeoutMs / 1000} s and was stopped.`, 'query')
      if (guards.signal?.aborted) throw new AppError('validation_error', 'The query was cancelled.', 'query')
      throw queryErrorOf(err, { memoryLimit: engineOpts.memoryLimit }) ?? err
    } finally {
      clearTimeout(timer)
      guards.signal?.removeEventListener('abort', interrupt)
      if (opts.deep) await c.run('RESET disabled_optimizers').catch(() => undefined)
      release(c)
    }
  }

  return {
    run(projectId, plan, guards) {
      // One row past the limit tells "too many" from "exactly the limit" without reading them all.
      const cap = Math.max(1, Math.floor(guards.maxRows)) + 1
      const limited = { ...plan, limit: plan.limit === undefined ? cap : Math.min(plan.limit, cap) }
      const { sql, values } = compilePlan(limited, projectId, duckDbEventDialect)
      return runSql(sql, values, guards, { deep: planDepth(plan) > DEEP_PLAN })
    },
    runSql: (sql, values, guards) => runSql(sql, values, guards),
    runHogQL: (projectId, query, opts, guards) => runHogQL(duckDbHogQLDialect, runSql, projectId, query, opts, guards),
  }
}

/**
 * Plans nested deeper than this (funnels of about ten steps and more) are planned without DuckDB's
 * filter pushdown: its planning time doubled with every level or two (measured on a 16-step funnel:
 * 2.4 s to plan, 0.04 s without it; 20 steps: 45 s, and planning cannot be interrupted). The plans'
 * own filters still apply; only their early use inside the scan is lost.
 */
const DEEP_PLAN = 24

function planDepth(plan: Plan): number {
  const s = plan.source
  if (s.kind === 'events' || s.kind === 'session_partials') return 1
  // A sequence's filter or prune is the WHERE of a level of its own (duckdb-sequence-sql.ts), which the
  // pushdown goes through again: a 20-step ordered funnel (18 prunes) took 2.1 CPU s to plan with it, 0.08 without.
  if (s.kind === 'sequence') return 1 + 2 * s.steps.filter((st) => st.fn === 'filter' || st.fn === 'prune').length + planDepth(s.plan)
  return 1 + (s.kind === 'join' ? Math.max(planDepth(s.left), planDepth(s.right)) : planDepth(s.plan))
}

function toPlainRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(row)) out[k] = toPlain(v)
  return out
}

function toPlain(v: unknown): unknown {
  if (typeof v === 'bigint') return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString()
  if (Array.isArray(v)) return v.map(toPlain)
  return v
}
