import type { ActionStepDefinition } from '../../../domain/actions/match-action.ts'
import type { PropertyFilter } from '../../../domain/properties/property-filter.ts'
import type { AggregateFn } from '../../../domain/query/query-plan.ts'
import type { Interval } from '../../../domain/query/date-range.ts'
import { AppError } from '../../../shared/errors.ts'
import { ELEMENTS_SQL, type SqlParams } from '../duckdb-action-elements-sql.ts'
import { jsonSource, propertyFilterSql } from '../duckdb-action-property-sql.ts'
import { compileActionSql, stepFilterSql } from '../duckdb-action-sql.ts'

/**
 * Everything about a query that depends on the SQL engine, for DuckDB. The plan compiler
 * (`compile-plan.ts`) writes the portable SELECT/FROM/WHERE shape and asks the dialect for the
 * rest; a ClickHouse dialect implements the same interface.
 */
export interface Dialect {
  /** The project's events (alias-free columns), with the effective person and parsed elements when asked. */
  eventsFrom(projectParam: string, needs: { person: boolean; elements: boolean }): string
  /** A column of the events relation (only known names). */
  eventColumn(name: string): string
  personId: string
  property(source: 'event' | 'person', key: string, params: SqlParams): string
  properties(source: 'event' | 'person'): string
  toNumber(text: string): string
  time(param: string): string
  bucket(interval: Interval, timeZone: string, ts: string, params: SqlParams): string
  /** `n` is SQL: a whole-number literal or an integer expression. */
  shift(interval: Interval, n: string, timeZone: string, ts: string, params: SqlParams): string
  epochMs(ts: string): string
  aggregate(fn: AggregateFn, arg: string | undefined, opts: { distinct?: boolean; quantile?: number }): string
  toText(value: string): string
  /** A property filter (event, person or element) with the shared operator semantics. */
  propertyFilter(filter: PropertyFilter, params: SqlParams): { sql: string; needsElements: boolean }
  action(steps: readonly ActionStepDefinition[], params: SqlParams): { sql: string; needsElements: boolean }
}

const EVENT_COLUMNS = new Set(['uuid', 'event', 'distinct_id', 'timestamp', 'created_at', 'elements_chain', 'properties', 'person_properties', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4'])
const UTC = new Set(['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT'])
const quantileOk = (q: number | undefined): q is number => typeof q === 'number' && q > 0 && q < 1

export const duckDbDialect: Dialect = {
  eventsFrom(projectParam, needs) {
    const person = needs.person ? ` LEFT JOIN person_overrides o ON o.project_id = e.project_id AND o.old_person_id = e.person_id` : ''
    if (!needs.elements) return `events e${person} WHERE e.project_id = ${projectParam}::INTEGER`
    // The chain is parsed once per row of the project, in a subquery, only when a filter reads elements.
    return `(SELECT events.*, ${ELEMENTS_SQL} AS __els FROM events WHERE project_id = ${projectParam}::INTEGER) e${person} WHERE TRUE`
  },
  eventColumn(name) {
    if (!EVENT_COLUMNS.has(name)) throw new AppError('validation_error', `Unknown column "${name}".`, 'query')
    return `e.${name}`
  },
  personId: 'COALESCE(o.override_person_id, e.person_id)',
  property(source, key, params) {
    return jsonSourceText(source === 'event' ? 'e.properties' : 'e.person_properties', key, params)
  },
  properties: (source) => (source === 'event' ? 'e.properties' : `COALESCE(e.person_properties, '{}')`),
  toNumber: (text) => `TRY_CAST(${text} AS DOUBLE)`,
  time: (param) => `${param}::TIMESTAMPTZ`,
  bucket(interval, timeZone, ts, params) {
    if (UTC.has(timeZone)) {
      // Weeks start on Sunday (PostHog's default week_start_day); DuckDB's 'week' is ISO (Monday).
      if (interval === 'week') return `(date_trunc('week', ${ts} + INTERVAL 1 DAY) - INTERVAL 1 DAY)`
      return `date_trunc('${interval}', ${ts})`
    }
    const tz = params.add(timeZone)
    if (interval === 'hour') {
      // Whole local hours through the offset at that instant: a repeated 02:00 (fall back) stays two buckets.
      const off = `(epoch(timezone(${tz}, ${ts})) - epoch(${ts}))`
      return `to_timestamp(floor((epoch(${ts}) + ${off}) / 3600) * 3600 - ${off})`
    }
    const local = `timezone(${tz}, ${ts})`
    const truncated = interval === 'week' ? `(date_trunc('week', ${local} + INTERVAL 1 DAY) - INTERVAL 1 DAY)` : `date_trunc('${interval}', ${local})`
    return `timezone(${tz}, ${truncated})`
  },
  shift(interval, n, timeZone, ts, params) {
    const step = interval === 'week' ? `INTERVAL (7 * (${n})) DAY` : `INTERVAL (${n}) ${interval.toUpperCase()}`
    if (interval === 'hour' || UTC.has(timeZone)) return `(${ts} + ${step})`
    const tz = params.add(timeZone)
    return `timezone(${tz}, timezone(${tz}, ${ts}) + ${step})`
  },
  epochMs: (ts) => `epoch_ms(${ts})`,
  aggregate(fn, arg, opts) {
    const a = arg ?? '*'
    switch (fn) {
      case 'count':
        return `count(${opts.distinct ? 'DISTINCT ' : ''}${a})`
      case 'uniq':
        return `count(DISTINCT ${a})`
      case 'quantile':
        if (!quantileOk(opts.quantile)) throw new Error('quantile between 0 and 1')
        return `quantile_cont(${a}, ${opts.quantile})`
      case 'any':
        return `any_value(${a})`
      default:
        return `${fn}(${opts.distinct ? 'DISTINCT ' : ''}${a})`
    }
  },
  toText: (value) => `CAST(${value} AS VARCHAR)`,
  propertyFilter(filter, params) {
    const type = filter.type ?? 'event'
    if (type === 'event') return { sql: propertyFilterSql(filter, jsonSource('e.properties', filter.key, params), params), needsElements: false }
    if (type === 'person') return { sql: propertyFilterSql(filter, jsonSource(`COALESCE(e.person_properties, '{}')`, filter.key, params), params), needsElements: false }
    if (type === 'element') {
      const r = stepFilterSql(filter, params)
      return { sql: r.condition, needsElements: r.needsElements }
    }
    throw new AppError('validation_error', `Property filters of type "${type}" are not supported here.`, 'properties')
  },
  action(steps, params) {
    const r = compileActionSql(steps, params)
    return { sql: r.condition, needsElements: r.needsElements }
  },
}

/** A property's text, NULL when absent (breakdowns and math read it; filters use `jsonSource`). */
function jsonSourceText(column: string, key: string, params: SqlParams): string {
  return `json_extract_string(${column}, ${params.add(`/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`)})`
}
