import { AppError } from '../../shared/errors.ts'

/** DuckDB error classes (message prefixes) that a query's own text or size causes, not the store. */
const OUT_OF_MEMORY = /^Out of Memory Error\b/
const OVERFLOW = /^Out of Range Error\b/
const BAD_VALUE = /^(Conversion|Invalid Input) Error\b/
const TOO_DEEP = /Max expression depth limit of \d+ exceeded/

const firstLine = (message: string) => message.split('\n')[0]!.slice(0, 300)

/**
 * The 4xx a failed query statement is, when the query itself is at fault: over DuckDB's memory
 * limit (400 naming TALLY_DUCKDB_MEMORY_LIMIT: it was answered 503 "store unavailable", which tells
 * a load balancer that Tally is down), an arithmetic overflow, a value that does not convert. Null
 * for anything else (the store's failures keep their 503).
 */
export function queryErrorOf(err: unknown, opts: { memoryLimit?: string | null } = {}): AppError | null {
  const message = err instanceof Error ? err.message : typeof err === 'string' ? err : ''
  if (OUT_OF_MEMORY.test(message)) {
    const limit = opts.memoryLimit ? ` (${opts.memoryLimit})` : ''
    return new AppError('validation_error', `The query needs more memory than the query memory limit${limit}, TALLY_DUCKDB_MEMORY_LIMIT: narrow it (date range, breakdown limit, fewer joins).`, 'query', { subCode: 'query_memory_limit' })
  }
  if (OVERFLOW.test(message)) return new AppError('validation_error', `Arithmetic overflow: ${firstLine(message)}`, 'query', { subCode: 'overflow' })
  if (TOO_DEEP.test(message)) return new AppError('validation_error', 'The query is nested too deeply (DuckDB allows an expression depth of 1,000): simplify it.', 'query', { subCode: 'query_too_deep' })
  if (BAD_VALUE.test(message)) return new AppError('validation_error', firstLine(message), 'query', { subCode: 'invalid_input' })
  return null
}
