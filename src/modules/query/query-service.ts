import { createHash } from 'node:crypto'
import type { ActionStepDefinition } from '../../domain/actions/match-action.ts'
import type { QueryCohort } from '../../domain/query/filter-expr.ts'
import { readNode } from '../../domain/query/query-fields.ts'
import { validationError } from '../../shared/errors.ts'
import { systemClock, type Clock } from '../../shared/clock.ts'
import type { Project } from '../projects/project-types.ts'
import type { Person } from '../persons/person-types.ts'
import type { ActorGroup, QueryContext, QueryNode, QueryResult, QueryRunner } from './query-context.ts'
import type { QueryEngine } from './query-engine.ts'
import type { QueryKind } from './query-kinds.ts'
import { createQueryAdmission, type QueryAdmissionLimits } from './query-admission.ts'

export interface QueryLimits extends QueryAdmissionLimits {
  /** Per statement, in the event store (interrupted past it). */
  timeoutMs: number
  /** Rows one statement may return. */
  maxRows: number
}

/** Metadata a query reads besides events: action steps and cohort definitions (null when not the project's). */
/** Groups a group-property breakdown may look up (their keys are bound into the statement). */
const MAX_GROUP_BREAKDOWN_GROUPS = 20_000

export interface QueryLookups {
  action(project: Project, id: number): Promise<{ name: string; steps: readonly ActionStepDefinition[] } | null>
  cohort(project: Project, id: number): Promise<QueryCohort | null>
  /** Each group of the type that has the property, with its value as text (at most `limit` + 1 rows). */
  groupValues(project: Project, typeIndex: number, key: string, limit: number): Promise<Array<[string, string]>>
  /** Persons by uuid (one set-based query per call; absent ones left out). */
  persons(project: Project, uuids: readonly string[]): Promise<Person[]>
  /** Groups of a type by key (one set-based query per call; absent ones left out). */
  groups(project: Project, typeIndex: number, keys: readonly string[]): Promise<ActorGroup[]>
}

/** Uuids or keys per metadata query when an actors query reads persons or groups. */
const LOOKUP_BATCH = 10_000

async function inBatches<T>(ids: readonly string[], read: (batch: readonly string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = []
  for (let i = 0; i < ids.length; i += LOOKUP_BATCH) out.push(...(await read(ids.slice(i, i + LOOKUP_BATCH))))
  return out
}

/** Wrappers PostHog stores insights in (`InsightVizNode`, `DataTableNode`...): their `source` is the query. */
const WRAPPERS = new Set(['InsightVizNode', 'DataTableNode', 'DataVisualizationNode'])

/** PostHog's response envelope around a kind's own fields. */
export type QueryResponse = QueryResult & { is_cached: boolean; last_refresh: string; timezone: string; cache_key: string }

/** The inner query of a node (wrappers unwrapped) with its kind; 400 naming `query.kind` when missing. */
export function unwrapQuery(v: unknown, attr = 'query'): { node: QueryNode; kind: string } {
  let node = readNode(v, attr)
  let path = attr
  for (let depth = 0; typeof node.kind === 'string' && WRAPPERS.has(node.kind) && depth < 3; depth++) {
    path = `${path}.source`
    node = readNode(node.source, path)
  }
  if (typeof node.kind !== 'string') throw validationError(`${path}.kind`, 'This field is required.', 'required')
  return { node, kind: node.kind }
}

/** A stable key of a query (what `cache_key` shows and insight caches compare). */
export function queryCacheKey(projectId: number, node: QueryNode, timeZone: string): string {
  return `cache_${createHash('sha256').update(JSON.stringify([projectId, timeZone, node])).digest('hex').slice(0, 32)}`
}

/** The kind's field path: `query.kind`, or `query.source.kind` inside a wrapper. */
function kindPath(query: unknown, attr: string): string {
  let path = attr
  let node = query as { kind?: unknown; source?: unknown }
  for (let depth = 0; typeof node.kind === 'string' && WRAPPERS.has(node.kind) && depth < 3; depth++) {
    path = `${path}.source`
    node = node.source as typeof node
  }
  return `${path}.kind`
}

/**
 * Runs PostHog queries: dispatch by `kind` to the runners, with concurrency limited per user, per
 * project and per process and a rate per user (429 past them, query-admission.ts), and each
 * statement under the time and row limits, cancelled when `signal` aborts.
 */
export function createQueryService(deps: { engine: QueryEngine; lookups: QueryLookups; limits: QueryLimits; kinds: ReadonlyMap<string, QueryKind>; clock?: Clock }) {
  const { engine, lookups, limits, kinds } = deps
  const clock = deps.clock ?? systemClock
  const unknownKind = (query: unknown, attr: string, kind: string) =>
    validationError(kindPath(query, attr), `Unknown query kind "${kind}" (known: ${[...kinds.keys()].join(', ')}).`, 'invalid_choice')
  const admission = createQueryAdmission(limits, clock)

  function contextFor(project: Project, signal: AbortSignal | undefined): QueryContext {
    const guards = { signal, timeoutMs: limits.timeoutMs, maxRows: limits.maxRows }
    return {
      project,
      timeZone: project.timezone || 'UTC',
      now: new Date(clock.now()),
      engine,
      guards,
      run: (plan) => engine.run(project.id, plan, guards),
      async action(id, attr) {
        return (await lookups.action(project, id)) ?? Promise.reject(validationError(attr, `Action ${id} does not exist.`, 'does_not_exist'))
      },
      async cohort(id, attr) {
        return (await lookups.cohort(project, id)) ?? Promise.reject(validationError(attr, `Cohort ${id} does not exist.`, 'cohort_does_not_exist'))
      },
      async groupValues(typeIndex, key, attr) {
        const rows = await lookups.groupValues(project, typeIndex, key, MAX_GROUP_BREAKDOWN_GROUPS)
        if (rows.length > MAX_GROUP_BREAKDOWN_GROUPS) {
          throw validationError(attr, `More than ${MAX_GROUP_BREAKDOWN_GROUPS} groups have "${key}": too many to break down by yet.`, 'invalid_input')
        }
        return rows
      },
      persons: (uuids) => inBatches(uuids, (batch) => lookups.persons(project, batch)),
      groups: (typeIndex, keys) => inBatches(keys, (batch) => lookups.groups(project, typeIndex, batch)),
    }
  }

  return {
    /** Queries computing now. */
    running: () => admission.running(),

    /** The cache key of a query (its wrapper unwrapped) in the project's zone. */
    cacheKey(project: Project, query: unknown): string {
      return queryCacheKey(project.id, unwrapQuery(query).node, project.timezone || 'UTC')
    },

    /** Throws the 400 `run` would for a query whose kind (its wrapper unwrapped) is not one Tally computes. */
    checkKind(query: unknown, attr = 'query'): void {
      const { kind } = unwrapQuery(query, attr)
      if (!kinds.has(kind)) throw unknownKind(query, attr, kind)
    },

    /**
     * Computes a query (or a wrapper's source) now; the answer carries PostHog's envelope. `userId`:
     * who asks (their concurrency limit applies); `rateLimited`: counts against their rate (the query API).
     */
    async run(project: Project, query: unknown, opts: { signal?: AbortSignal; userId?: number; rateLimited?: boolean } = {}): Promise<QueryResponse> {
      const { node, kind } = unwrapQuery(query)
      // A Map: only registered kinds resolve (never `constructor` or `__proto__` of an object's prototype).
      const runner = kinds.get(kind)?.run
      if (!runner) throw unknownKind(query, 'query', kind)
      const release = admission.admit({ projectId: project.id, userId: opts.userId ?? null, rateLimited: opts.rateLimited })
      try {
        const ctx = contextFor(project, opts.signal)
        const result = await runner(ctx, node)
        const now = new Date(clock.now()).toISOString()
        return {
          ...result,
          is_cached: false,
          last_refresh: now,
          next_allowed_client_refresh: now,
          cache_key: queryCacheKey(project.id, node, ctx.timeZone),
          timezone: ctx.timeZone,
          query_status: null,
          error: null,
          timings: [],
          modifiers: {},
        }
      } finally {
        release()
      }
    },
  }
}

export type QueryService = ReturnType<typeof createQueryService>
