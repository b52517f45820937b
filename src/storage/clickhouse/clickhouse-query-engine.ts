import { randomUUID } from 'node:crypto'
import type { QueryEngine, QueryRows, RunGuards } from '../../modules/query/query-engine.ts'
import { AppError } from '../../shared/errors.ts'
import { booleanColumns } from '../event-sql/boolean-columns.ts'
import { compilePlan } from '../event-sql/compile-plan.ts'
import { readsUserRegex } from '../event-sql/plan-reads-regex.ts'
import { runHogQL } from '../event-sql/hogql/run-hogql.ts'
import { clickHouseEventDialect } from './clickhouse-event-dialect.ts'
import { clickHouseHogQLDialect, clickHouseStatementRefused } from './clickhouse-hogql-dialect.ts'
import { clickHouseCode, clickHouseMessage } from './clickhouse-errors.ts'
import type { ClickHouse } from './open-clickhouse.ts'

interface JsonResult {
  meta: Array<{ name: string; type: string }>
  data: Record<string, unknown>[]
}


/**
 * Query runners' statements on ClickHouse, under the guards every engine applies: at most
 * `concurrency` statements at once (the rest wait, as DuckDB's connection pool), a time limit
 * enforced twice (ClickHouse's `max_execution_time` and a timer here), `KILL QUERY` when the limit
 * passes or the client goes away, and a row limit. Statements compiled from plans carry the project
 * filter (the dialect's `eventsFrom`); statements from elsewhere run with `readonly = 2` (no writes,
 * settings allowed) and a statement ClickHouse refuses is a 400 naming the problem. A statement
 * past its memory limit (`memoryLimit`, TALLY_CLICKHOUSE_QUERY_MEMORY_LIMIT, else the server's
 * `max_memory_usage`) is a 400 too: the query is at fault, not the store (503 would tell a load
 * balancer that Tally is down). The server's total limit stays a 503.
 */
export function createClickHouseQueryEngine(
  ch: ClickHouse,
  opts: { concurrency: number; threads?: number; memoryLimit?: { text: string; bytes: number } | null },
): QueryEngine {
  let running = 0
  const waiting: Array<() => void> = []
  const acquire = async (): Promise<void> => {
    if (running < opts.concurrency) {
      running++
      return
    }
    await new Promise<void>((resolve) => waiting.push(resolve))
  }
  const release = (): void => {
    const next = waiting.shift()
    if (next) next()
    else running--
  }

  /**
   * `readonly`: run with `readonly = 2` (no writes; settings allowed) and read a refused statement as
   * the client's error: a 400 here, or, with `raw`, ClickHouse's own error for the caller to word.
   * `deep`: a compiled plan's statement, allowed the plan AST limits (PLAN_AST_LIMITS).
   * `smallBlocks`: the statement evaluates a client's regex (SMALL_BLOCKS).
   */
  async function runStatement(sql: string, guards: RunGuards, mode: { readonly: boolean; raw?: boolean; booleans?: ReadonlySet<string>; deep?: boolean; smallBlocks?: boolean }): Promise<QueryRows> {
    if (guards.signal?.aborted) throw new AppError('validation_error', 'The query was cancelled.', 'query')
    await acquire()
    const queryId = randomUUID()
    const controller = new AbortController()
    let timedOut = false
    let cancelled = false
    const stop = () => {
      controller.abort()
      ch.kill(queryId).catch(() => undefined)
    }
    const onAbort = () => {
      cancelled = true
      stop()
    }
    const timer = setTimeout(() => {
      timedOut = true
      stop()
    }, guards.timeoutMs)
    guards.signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const r: JsonResult = await ch.queryWithMeta(sql, {
        queryId,
        signal: controller.signal,
        settings: {
          max_execution_time: Math.max(1, Math.ceil(guards.timeoutMs / 1000)),
          join_use_nulls: 1,
          // Plans may carry large constant tables (the channel definitions, ~90 KB) and ClickHouse inlines shared sub-plans.
          max_query_size: '4194304',
          output_format_json_quote_64bit_integers: 0,
          // One statement takes at most `threads` cores (TALLY_QUERY_THREADS): a member's heavy query
          // leaves the others (ingestion, other members) the rest of the machine.
          ...(opts.threads ? { max_threads: opts.threads } : {}),
          ...(opts.memoryLimit ? { max_memory_usage: String(opts.memoryLimit.bytes) } : {}),
          ...(mode.smallBlocks ? SMALL_BLOCKS : {}),
          ...(mode.readonly ? { readonly: '2' } : {}),
          // Plans nest subqueries per step (funnels of 20 steps pass 18.16's defaults: 100 levels, depth 1,000).
          ...(mode.deep ? PLAN_AST_LIMITS : {}),
        },
      })
      if (r.data.length > guards.maxRows) {
        throw new AppError('validation_error', `The query returns more than ${guards.maxRows} rows (TALLY_QUERY_MAX_ROWS): narrow it (date range, breakdown limit, LIMIT).`, 'query', { subCode: 'query_row_limit' })
      }
      const converters = r.meta.map((m) => (mode.booleans?.has(m.name) ? toBoolean : converter(m.type)))
      const rows = r.data.map((row) => {
        const out: Record<string, unknown> = {}
        r.meta.forEach((m, i) => {
          out[m.name] = converters[i]!(row[m.name])
        })
        return out
      })
      return { columns: r.meta.map((m) => m.name), types: r.meta.map((m) => m.type), rows }
    } catch (err) {
      if (timedOut || clickHouseCode(err) === '159') throw new AppError('query_timeout', `The query ran longer than ${guards.timeoutMs / 1000} s and was stopped.`, 'query')
      if (cancelled || guards.signal?.aborted) throw new AppError('validation_error', 'The query was cancelled.', 'query')
      if (err instanceof AppError) throw err
      if (clickHouseCode(err) === '241' && /Memory limit \(for query\)/.test(clickHouseMessage(err))) {
        const limit = opts.memoryLimit ? ` (${opts.memoryLimit.text})` : ' (the server\'s max_memory_usage)'
        throw new AppError('validation_error', `The query needs more memory than the query memory limit${limit}, TALLY_CLICKHOUSE_QUERY_MEMORY_LIMIT: narrow it (date range, breakdown limit, fewer joins).`, 'query', { subCode: 'query_memory_limit' })
      }
      // Before the transient test: READONLY (164) is also what a server in read-only mode answers, but
      // under `readonly = 2` it is this statement writing.
      if (mode.readonly && clickHouseStatementRefused(err)) {
        if (mode.raw) throw Object.assign(err as Error, { transient: false })
        throw new AppError('validation_error', `ClickHouse refused the query: ${clickHouseMessage(err)}`, 'query')
      }
      throw err
    } finally {
      clearTimeout(timer)
      guards.signal?.removeEventListener('abort', onAbort)
      release()
    }
  }

  return {
    async run(projectId, plan, guards) {
      const cap = Math.max(1, Math.floor(guards.maxRows)) + 1
      const limited = { ...plan, limit: plan.limit === undefined ? cap : Math.min(plan.limit, cap) }
      const { sql } = compilePlan(limited, projectId, clickHouseEventDialect)
      return runStatement(sql, guards, { readonly: false, booleans: booleanColumns(plan), deep: true, smallBlocks: readsUserRegex(plan) })
    },
    runSql(sql, values, guards) {
      if (values.length > 0) throw new Error('ClickHouse statements carry their values as literals (no bound parameters)')
      return runStatement(sql, guards, { readonly: true })
    },
    runHogQL(projectId, query, opts, guards) {
      return runHogQL(clickHouseHogQLDialect, (sql, _values, g) => runStatement(sql, g, { readonly: true, raw: true }), projectId, query, opts, guards)
    },
  }
}

/**
 * Settings of a statement that evaluates a client's regex. ClickHouse checks its time limit and KILL
 * QUERY only between blocks, and 18.16 evaluated a moved-to-PREWHERE regex over whole granules
 * (8,192 rows): a heavy pattern on 1 KB values (28 ms a row here) ran 314 s past a 2 s
 * max_execution_time, and past KILL QUERY. Without PREWHERE and in blocks of 128 rows it stops within
 * one block of the limit; 128-row blocks cost little beside the regex itself (measured in the commit).
 */
const SMALL_BLOCKS = { max_block_size: '128', optimize_move_to_prewhere: 0 } as const

/** A UInt8 truth value (18.16 has no boolean type) as a boolean; NULL stays NULL. */
function toBoolean(v: unknown): unknown {
  return v === null || v === undefined ? v : v === true || v === 1 || v === '1' || v === 'true'
}

/** Limits on a plan's statement tree: compiled by Tally, never user text, so bounded by the plans' own size. */
const PLAN_AST_LIMITS = { max_subquery_depth: '2000', max_ast_depth: '20000', max_ast_elements: '5000000', max_expanded_ast_elements: '50000000' }

function firstLine(err: unknown): string {
  const m = err instanceof Error ? err.message : String(err)
  return m.split('\n')[0]!.replace(/\s*\(version [^)]*\)\s*$/, '').slice(0, 300)
}

/** ClickHouse's JSON value of a column type as the runners expect it (Dates for times, numbers). */
function converter(type: string): (v: unknown) => unknown {
  const inner = type.replace(/^Nullable\((.*)\)$/, '$1')
  if (inner.startsWith('DateTime')) return (v) => (typeof v === 'string' ? new Date(`${v.replace(' ', 'T')}Z`) : v)
  if (inner === 'Date') return (v) => (typeof v === 'string' ? new Date(`${v}T00:00:00Z`) : v)
  if (/^U?Int(64|128|256)$/.test(inner)) return (v) => (typeof v === 'string' && Number.isSafeInteger(Number(v)) ? Number(v) : v)
  return (v) => v
}
