import { createHash } from 'node:crypto'
import type { PropertyFilter, PropertyGroup } from '../../domain/properties/property-filter.ts'
import { toCohortDefinition, type ProjectFlagState } from './flag-state.ts'
import type { FeatureFlag } from '../feature-flags/feature-flag-types.ts'
import { cohortRoot } from '../../domain/flags/compile-cohorts.ts'
import { dependencyChain, dependencyGraph, findBrokenDependencies, flagRefResolver } from '../../domain/flags/flag-dependencies.ts'

export interface DefinitionsBody {
  json: string
  etag: string
}

/**
 * The local-evaluation payload (PostHog's `local_evaluation`, Rust `/flags/definitions`): every
 * non-deleted flag (inactive ones too), the group type mapping, and with `send_cohorts` the dynamic
 * cohorts the flags reference (static ones are left out so SDKs defer to the server). Flag-dependency
 * filters get the target's key and a `dependency_chain`, as PostHog rewrites them.
 */
export function buildDefinitions(state: ProjectFlagState, sendCohorts: boolean): DefinitionsBody {
  const resolve = flagRefResolver(state.flags)
  const graph = dependencyGraph(state.flags)
  const broken = findBrokenDependencies(graph)
  const cohortsById = new Map(state.cohorts.map((c) => [String(c.id), c]))
  const referenced = new Set<string>()
  const mapFilter = (p: PropertyFilter): PropertyFilter => {
    if (p.type === 'cohort') referenced.add(String(p.value))
    if (p.type !== 'flag') return p
    const target = resolve(p.key)
    if (target === undefined) return { ...p, key: String(p.key), dependency_chain: [] }
    const chain = dependencyChain(graph, target, broken)?.map((i) => state.flags[i]!.key) ?? []
    return { ...p, key: state.flags[target]!.key, dependency_chain: chain }
  }
  const flags = state.flags.map((f: FeatureFlag) => {
    const groups = f.filters.groups?.map((g) => ({ ...g, properties: (g.properties ?? []).map(mapFilter) }))
    return { f, filters: groups ? { ...f.filters, groups } : f.filters }
  })
  const out = flags.map(({ f, filters }) => {
    return {
      id: f.id,
      team_id: f.projectId,
      name: f.name,
      key: f.key,
      filters,
      deleted: f.deleted,
      active: f.active,
      ensure_experience_continuity: f.ensureExperienceContinuity,
      has_encrypted_payloads: false,
      version: f.version,
      evaluation_runtime: f.evaluationRuntime,
      evaluation_tags: [],
    }
  })
  const cohorts: Record<string, PropertyGroup> = {}
  if (sendCohorts) {
    // Nested cohort references are followed, so the SDK can evaluate cohort-in-cohort.
    const queue = [...referenced]
    while (queue.length > 0) {
      const id = queue.pop()!
      const cohort = cohortsById.get(id)
      if (!cohort || cohort.isStatic || cohorts[id]) continue
      cohorts[id] = cohortRoot(toCohortDefinition(cohort))
      JSON.stringify(cohorts[id], (k, v) => {
        if (v && typeof v === 'object' && v.type === 'cohort' && v.value !== undefined) queue.push(String(v.value))
        return v
      })
    }
  }
  const json = JSON.stringify({ flags: out, group_type_mapping: state.groupTypeMapping, cohorts })
  return { json, etag: `"${createHash('sha1').update(json).digest('hex')}"` }
}

/** Caches the definitions bodies per project and `send_cohorts`, dropped with the flag cache. */
export function createDefinitionsCache() {
  const bodies = new Map<string, { state: ProjectFlagState; body: DefinitionsBody }>()
  return {
    get(state: ProjectFlagState, sendCohorts: boolean): DefinitionsBody {
      const key = `${state.projectId}:${sendCohorts}`
      const hit = bodies.get(key)
      if (hit && hit.state === state) return hit.body
      const body = buildDefinitions(state, sendCohorts)
      bodies.set(key, { state, body })
      return body
    },
  }
}

export type DefinitionsCache = ReturnType<typeof createDefinitionsCache>
