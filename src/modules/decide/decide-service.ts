import { evaluateFlags } from '../../domain/flags/evaluate-flags.ts'
import type { FlagEvaluation } from '../../domain/flags/flag-types.ts'
import type { DecideReadModel } from './decide-read-model.ts'
import type { ProjectFlagState } from './flag-state.ts'
import { createBatchLoader } from './batch-loader.ts'
import type { DecideRequest } from './decide-request.ts'
import type { PersonDataReader, StoredPerson } from '../persons/person-data-store.ts'

export interface DecideResult {
  flags: FlagEvaluation[]
  /** PostHog's `errorsWhileComputingFlags`: some flag could not be computed and is left out. */
  errors: boolean
}

type Logger = { warn(obj: object, msg: string): void }

/**
 * Flag evaluation for /decide and /flags. Definitions come from the in-memory flag cache; stored
 * person and group properties are loaded set-based (concurrent requests share one query) and only
 * when an active flag reads them; request overrides win over stored values. A failed read leaves
 * out only the flags that needed it and sets the error flag, never failing the request.
 */
/** A synchronous look into a cache in front of the reader: `{value}` on a hit, undefined on a miss. */
export type PeekPerson = (projectId: number, withCohorts: boolean, distinctId: string) => { value: StoredPerson | undefined } | undefined

const NO_KEYS: string[] = []

export function createDecideService(deps: {
  cache: DecideReadModel
  persons: PersonDataReader & { peekPerson?: PeekPerson }
  log?: Logger
  now?: () => number
}) {
  const now = deps.now ?? Date.now
  const groupLoaders = new Map<number, ReturnType<typeof createBatchLoader<string, Record<string, unknown>>>>()

  const personLoaders = new Map<string, ReturnType<typeof createBatchLoader<string, StoredPerson>>>()
  function personLoader(projectId: number, withCohorts: boolean) {
    let loader = personLoaders.get(`${projectId}:${withCohorts}`)
    if (!loader) {
      loader = createBatchLoader((ids: string[]) => deps.persons.getPersons(projectId, ids, { withCohorts }))
      personLoaders.set(`${projectId}:${withCohorts}`, loader)
    }
    return loader
  }
  function groupLoader(projectId: number) {
    let loader = groupLoaders.get(projectId)
    if (!loader) {
      loader = createBatchLoader((keys: string[]) =>
        deps.persons.getGroups(
          projectId,
          keys.map((k) => ({ groupTypeIndex: Number(k.slice(0, k.indexOf(':'))), groupKey: k.slice(k.indexOf(':') + 1) })),
        ),
      )
      groupLoaders.set(projectId, loader)
    }
    return loader
  }

  async function loadGroups(state: ProjectFlagState, req: DecideRequest) {
    const out: Record<string, Record<string, unknown>> = {}
    const loads: Promise<void>[] = []
    for (const [index, name] of Object.entries(state.groupTypeMapping)) {
      const key = req.groups[name]
      if (key === undefined || key === null || key === '') continue
      loads.push(
        groupLoader(state.projectId)
          .load(`${index}:${String(key)}`)
          .then((props) => {
            out[name] = { ...props, ...req.groupProperties[name] }
          }),
      )
    }
    await Promise.all(loads)
    return out
  }

  async function hashKeyOverrides(state: ProjectFlagState, req: DecideRequest, wanted: string[]): Promise<Record<string, string>> {
    const ids = req.anonDistinctId && req.anonDistinctId !== req.distinctId ? [req.distinctId, req.anonDistinctId] : [req.distinctId]
    if (req.anonDistinctId) {
      await deps.persons.writeHashKeyOverrides({ projectId: state.projectId, distinctIds: ids, flagKeys: wanted, hashKey: req.anonDistinctId })
    }
    const overrides: Record<string, string> = {}
    // The override of the person of `distinct_id` wins over the anonymous person's (PostHog).
    const rows = await deps.persons.getHashKeyOverrides(state.projectId, ids)
    for (const row of rows) if (row.distinctId !== req.distinctId) overrides[row.flagKey] = row.hashKey
    for (const row of rows) if (row.distinctId === req.distinctId) overrides[row.flagKey] = row.hashKey
    return overrides
  }

  const stats = { evaluations: 0, errors: 0 }
  const counted = (result: DecideResult): DecideResult => {
    stats.evaluations++
    if (result.errors) stats.errors++
    return result
  }

  return {
    /** Evaluations since start, and how many answered with `errorsWhileComputingFlags`. */
    stats: () => ({ ...stats }),

    /** Flag state for a project: cached, loaded on first use or after a change. */
    state: (projectId: number): ProjectFlagState | Promise<ProjectFlagState> => deps.cache.peek(projectId) ?? deps.cache.get(projectId),

    /**
     * Evaluates the flags of a request. Synchronous (no promise, no microtask) when the flag state and
     * every stored datum it needs are cached, which is the common case of a warm /decide.
     */
    evaluate(projectId: number, req: DecideRequest): DecideResult | Promise<DecideResult> {
      if (req.disableFlags) return counted(noFlags())
      const state = deps.cache.peek(projectId)
      const result = state === undefined ? deps.cache.get(projectId).then((loaded) => evaluateWith(loaded, req)) : evaluateWith(state, req)
      return result instanceof Promise ? result.then(counted) : counted(result)
    },
  }

  function evaluateWith(state: ProjectFlagState, req: DecideRequest): DecideResult | Promise<DecideResult> {
    if (state.compiled.flags.length === 0) return noFlags()
    const wanted = req.flagKeys ? new Set(req.flagKeys) : null
    // A cached person is used at once: no batch tick, no promise when nothing else is read.
    let person: StoredPerson | undefined
    let personRead: Promise<StoredPerson | undefined> | undefined
    if (reads(state.personFlags, wanted)) {
      const withCohorts = state.compiled.usesStaticCohorts
      const hit = deps.persons.peekPerson?.(state.projectId, withCohorts, req.distinctId)
      if (hit !== undefined) person = hit.value
      else personRead = personLoader(state.projectId, withCohorts).load(req.distinctId)
    }
    const readsGroups = reads(state.groupFlags, wanted)
    // No continuity flag (wanted): no override read or write at all.
    const continuityKeys = state.continuityFlags.size === 0 ? NO_KEYS : [...state.continuityFlags].filter((k) => wanted === null || wanted.has(k))
    if (personRead === undefined && !readsGroups && continuityKeys.length === 0) return finish(state, req, person, undefined, undefined, NOT_FAILED)
    return evaluateAfterReads(state, req, { person, personRead, readsGroups, continuityKeys })
  }

  async function evaluateAfterReads(
    state: ProjectFlagState,
    req: DecideRequest,
    pending: { person: StoredPerson | undefined; personRead: Promise<StoredPerson | undefined> | undefined; readsGroups: boolean; continuityKeys: string[] },
  ): Promise<DecideResult> {
    const failed = { person: false, groups: false, continuity: false }
    const warn = (what: string, err: unknown) => {
      deps.log?.warn({ err, projectId: state.projectId }, `decide: could not read ${what}`)
      return undefined
    }
    const groupRead = pending.readsGroups ? loadGroups(state, req) : undefined
    const overrideRead = pending.continuityKeys.length > 0 ? hashKeyOverrides(state, req, pending.continuityKeys) : undefined
    const [person, groups, overrides] = await Promise.all([
      pending.personRead?.catch((err) => ((failed.person = true), warn('persons', err))) ?? pending.person,
      groupRead?.catch((err) => ((failed.groups = true), warn('groups', err))),
      overrideRead?.catch((err) => ((failed.continuity = true), warn('hash key overrides', err))),
    ])
    return finish(state, req, person, groups, overrides, failed)
  }

  function finish(
    state: ProjectFlagState,
    req: DecideRequest,
    person: StoredPerson | undefined,
    groups: Record<string, Record<string, unknown>> | undefined,
    overrides: Record<string, string> | undefined,
    failed: Readonly<{ person: boolean; groups: boolean; continuity: boolean }>,
  ): DecideResult {
    const result = evaluateFlags(state.compiled, {
      distinctId: req.distinctId,
      // One merged bag, with PostHog's `distinct_id` default in it, so the engine need not copy it again.
      personProperties: { distinct_id: req.distinctId, ...person?.properties, ...req.personProperties },
      groups: req.groups,
      groupProperties: groups ?? req.groupProperties,
      hashKeyOverrides: overrides,
      anonDistinctId: req.anonDistinctId,
      deviceId: req.deviceId,
      staticCohortIds: person?.staticCohortIds,
      now: now(),
      flagKeysToEvaluate: req.flagKeys,
    })
    if (!failed.person && !failed.groups && !failed.continuity) return { flags: result.flags, errors: result.errorsWhileComputingFlags }
    const flags = result.flags.filter(
      (f) =>
        !(failed.person && state.personFlags.has(f.key)) &&
        !(failed.groups && state.groupFlags.has(f.key)) &&
        !(failed.continuity && state.continuityFlags.has(f.key)),
    )
    return { flags, errors: true }
  }
}

const noFlags = (): DecideResult => ({ flags: [], errors: false })
const NOT_FAILED = Object.freeze({ person: false, groups: false, continuity: false })

/** Does some active flag (among the wanted ones) read this kind of stored data? */
function reads(set: ReadonlySet<string>, wanted: ReadonlySet<string> | null): boolean {
  if (set.size === 0) return false
  if (wanted === null) return true
  for (const k of set) if (wanted.has(k)) return true
  return false
}

export type DecideService = ReturnType<typeof createDecideService>
