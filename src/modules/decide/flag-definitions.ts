import { createHash } from 'node:crypto'
import type { PropertyFilter, PropertyGroup } from '../../domain/properties/property-filter.ts'
import { toCohortDefinition, type ProjectFlagState } from './flag-state.ts'
import type { FeatureFlag } from '../feature-flags/feature-flag-types.ts'
import { cohortRoot } from '../../domain/flags/compile-cohorts.ts'

export interface DefinitionsBody {
  json: string
  etag: string
}

/** Flag dependency keys in evaluation order ending with `key`; `[]` on a cycle or a missing flag. */
function dependencyChain(key: string, depsOf: ReadonlyMap<string, string[]>): string[] {
  const chain: string[] = []
  const visiting = new Set<string>()
  const done = new Set<string>()
  const visit = (k: string): boolean => {
    if (done.has(k)) return true
    if (visiting.has(k) || !depsOf.has(k)) return false
    visiting.add(k)
    for (const d of depsOf.get(k)!) if (!visit(d)) return false
    visiting.delete(k)
    done.add(k)
    chain.push(k)
    return true
  }
  return visit(key) ? chain : []
}


/**
 * The local-evaluation payload (PostHog's `local_evaluation`, Rust `/flags/definitions`): every
 * non-deleted flag (inactive ones too), the group type mapping, and with `send_cohorts` the dynamic
 * cohorts the flags reference (static ones are left out so SDKs defer to the server). Flag-dependency
 * filters get the target's key and a `dependency_chain`, as PostHog rewrites them.
 */
export function buildDefinitions(state: ProjectFlagState, sendCohorts: boolean): DefinitionsBody {
  const keyById = new Map(state.flags.map((f) => [String(f.id), f.key]))
  const depsOf = new Map<string, string[]>()
  const cohortsById = new Map(state.cohorts.map((c) => [String(c.id), c]))
  const referenced = new Set<string>()
  const mapFilter = (p: PropertyFilter): PropertyFilter => {
    if (p.type === 'cohort') referenced.add(String(p.value))
    if (p.type !== 'flag') return p
    return { ...p, key: keyById.get(String(p.key)) ?? String(p.key) }
  }
  const flags = state.flags.map((f: FeatureFlag) => {
    const groups = f.filters.groups?.map((g) => ({ ...g, properties: (g.properties ?? []).map(mapFilter) }))
    const deps = (groups ?? []).flatMap((g) => g.properties.filter((p) => p.type === 'flag').map((p) => p.key))
    depsOf.set(f.key, deps)
    return { f, filters: groups ? { ...f.filters, groups } : f.filters }
  })
  const out = flags.map(({ f, filters }) => {
    const withChains = filters.groups
      ? {
          ...filters,
          groups: filters.groups.map((g) => ({
            ...g,
            properties: (g.properties ?? []).map((p) => (p.type === 'flag' ? { ...p, dependency_chain: dependencyChain(p.key, depsOf) } : p)),
          })),
        }
      : filters
    return {
      id: f.id,
      team_id: f.projectId,
      name: f.name,
      key: f.key,
      filters: withChains,
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
