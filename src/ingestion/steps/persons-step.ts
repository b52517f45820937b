import { createHash, randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { groupsToLookUp, planGroupUpdates } from '../../domain/groups/index.ts'
import { distinctIdsToLookUp, planPersonUpdates, type PersonEvent, type PersonPlan } from '../../domain/persons/index.ts'
import { crashPoint } from '../../shared/crash-points.ts'
import type { StoredEvent } from '../event-store.ts'
import { propertiesOf } from '../event-properties.ts'
import { stepPropertiesOf, withAddedProperties, withRewrittenProperties } from '../step-properties.ts'
import type { GroupStore, PersonOverrideStore, PersonStore } from '../person-store.ts'
import { dlq, drop, ok, type BatchStep, type StepResult } from '../results.ts'

export interface PersonsStepDeps {
  persons: PersonStore
  overrides: PersonOverrideStore
  /** /decide's person cache: told every distinct id whose person changed, after the commit. */
  cache: {
    invalidatePersons(projectId: number, distinctIds: readonly string[]): void
    invalidateGroups?(projectId: number, refs: ReadonlyArray<{ typeIndex: number; key: string }>): void
  }
  /**
   * Groups (`$groups` -> `$group_0..4` on the event, `$groupidentify` upserts the group): the stored
   * groups, and the project's group types (created if new; the group-types service caches them).
   */
  groups?: {
    store: GroupStore
    ensureGroupTypes(projectId: number, names: Iterable<string>): Promise<ReadonlyArray<{ groupType: string; groupTypeIndex: number }>>
  }
  logger?: Pick<Logger, 'warn'>
  newId?: () => string
}

/** Keys a personless event may not carry into storage: it changes no person (PostHog strips them). */
const PERSON_UPDATE_KEYS = ['$set', '$set_once', '$unset'] as const

/**
 * Person processing (PostHog's person state step), set-based per micro-batch and project: ONE look-up
 * of every distinct id the batch names, the pure `planPersonUpdates`, the plan's overrides written to
 * the events database, ONE transactional apply, then each event gets its person id and a snapshot of
 * its person's properties (persons on events). A store error is thrown: the pipeline judges it
 * (transient: the batch comes again; about the data: the batch is split). Overrides are written
 * before the persons so a retry after a failure between the two loses neither (both writes are
 * idempotent for the same plan, and the override rows are keyed by the merged-away person).
 */
export function createPersonsStep(deps: PersonsStepDeps): BatchStep<StoredEvent, StoredEvent> {
  const newId = deps.newId ?? randomUUID
  return {
    name: 'persons',
    async run(batch) {
      const results: StepResult<StoredEvent>[] = new Array(batch.length)
      const byProject = new Map<number, { index: number[]; events: PersonEvent[]; groupTypes: Set<string> | null }>()
      for (let i = 0; i < batch.length; i++) {
        const e = batch[i]!
        let properties: Record<string, unknown>
        try {
          properties = stepPropertiesOf(e)
        } catch (err) {
          results[i] = dlq('unreadable_properties', err)
          continue
        }
        let group = byProject.get(e.projectId)
        if (group === undefined) byProject.set(e.projectId, (group = { index: [], events: [], groupTypes: null }))
        if (e.event === '$groupidentify' || Object.hasOwn(properties, '$groups')) {
          group.groupTypes ??= new Set()
          const declared = properties.$groups
          if (declared && typeof declared === 'object' && !Array.isArray(declared)) for (const name of Object.keys(declared)) group.groupTypes.add(name)
          if (e.event === '$groupidentify' && typeof properties.$group_type === 'string' && properties.$group_type) group.groupTypes.add(properties.$group_type)
        }
        group.index.push(i)
        group.events.push({ uuid: e.uuid, event: e.event, distinctId: e.distinctId, timestamp: e.timestamp, properties })
      }
      for (const [projectId, group] of byProject) {
        const found = await deps.persons.lookUp(projectId, distinctIdsToLookUp(group.events))
        const plan = planPersonUpdates({
          events: group.events,
          knownPersons: found.persons,
          newId,
          personlessId: (distinctId) => personlessPersonId(projectId, distinctId),
          personlessBefore: found.personless,
        })
        await deps.overrides.write(projectId, plan.overrides)
        // A merge of stored persons spans two stores; the kill -9 matrix dies between and after them.
        if (plan.deletes.length > 0) crashPoint('persons.merge.after-overrides')
        await deps.persons.apply(projectId, plan)
        if (plan.deletes.length > 0) crashPoint('persons.merge.after-apply')
        deps.cache.invalidatePersons(projectId, changedDistinctIds(plan))
        if (plan.warnings.length > 0) {
          deps.logger?.warn({ projectId, warnings: plan.warnings.slice(0, 20), count: plan.warnings.length }, 'person processing warnings')
        }
        const eventGroups = group.groupTypes === null ? null : await processGroups(deps, projectId, group.events, group.groupTypes)
        const snapshotText = new WeakMap<object, string>()
        for (let k = 0; k < group.index.length; k++) {
          const i = group.index[k]!
          const r = plan.events[k]!
          if (r.kind === 'drop') {
            results[i] = drop(r.reason)
            continue
          }
          let text = snapshotText.get(r.personProperties)
          if (text === undefined) snapshotText.set(r.personProperties, (text = JSON.stringify(r.personProperties)))
          const stepped = withPersonChanges(batch[i]!, r.personMode !== 'full', eventGroups?.[k] ?? null)
          results[i] = ok({ ...stepped, personId: r.personId, personProperties: text })
        }
      }
      return results
    },
  }
}

/**
 * The event as stored after person processing: a personless event (not `full`) loses `$set`,
 * `$set_once` and `$unset` (parsed and serialised again: rare); an event with groups gets
 * `$group_<index>: key` in its properties for each of its groups whose type the project knows
 * (PostHog's addGroupProperties, so `properties.$group_0` reads in queries and the API): spliced into
 * the text unless it has such keys already. Its step properties and shape follow.
 */
function withPersonChanges(source: StoredEvent, personless: boolean, groups: Array<string | null> | null): StoredEvent {
  let e = source
  if (personless) {
    const step = stepPropertiesOf(e)
    if (PERSON_UPDATE_KEYS.some((key) => Object.hasOwn(step, key))) {
      const rest = { ...propertiesOf(e) }
      for (const key of PERSON_UPDATE_KEYS) delete rest[key]
      e = withRewrittenProperties(e, rest, 'personless')
    }
  }
  if (groups === null) return e
  const added: Record<string, unknown> = {}
  groups.forEach((key, index) => {
    if (key !== null) added[`$group_${index}`] = key
  })
  const step = stepPropertiesOf(e)
  const change = `groups:${Object.keys(added).join(',')}`
  e = Object.keys(added).some((key) => Object.hasOwn(step, key))
    ? withRewrittenProperties(e, { ...propertiesOf(e), ...added }, change)
    : withAddedProperties(e, added, change)
  return { ...e, groups }
}

/**
 * Groups of one project's events (PostHog's process-groups step): group types ensured (cached), ONE
 * look-up of the `$groupidentify` groups, `planGroupUpdates`, ONE upsert. Returns each event's
 * `$group_0..4` (null when it has none).
 */
async function processGroups(
  deps: PersonsStepDeps, projectId: number, events: readonly PersonEvent[], names: Set<string>,
): Promise<Array<Array<string | null> | null> | null> {
  if (deps.groups === undefined) return null
  const types = new Map((await deps.groups.ensureGroupTypes(projectId, names)).map((t) => [t.groupType, t.groupTypeIndex]))
  const refs = groupsToLookUp(events).flatMap((g) => {
    const typeIndex = types.get(g.groupType)
    return typeIndex === undefined ? [] : [{ typeIndex, key: g.key }]
  })
  const known = await deps.groups.store.lookUpGroups(projectId, refs)
  const plan = planGroupUpdates({ events, groupTypes: types, knownGroups: known })
  // Types the planner would add are over the limit or raced: only stored indexes are used.
  const stored = new Set(types.values())
  const upserts = plan.upserts.filter((g) => stored.has(g.typeIndex))
  await deps.groups.store.applyGroups(projectId, upserts)
  deps.cache.invalidateGroups?.(projectId, upserts)
  return plan.eventGroups.map((cols) => {
    let out: Array<string | null> | null = null
    for (let i = 0; i < 5; i++) {
      const key = cols[`$group_${i}`]
      if (key === undefined || !stored.has(i)) continue
      out ??= [null, null, null, null, null]
      out[i] = key
    }
    return out
  })
}

/** Every distinct id whose person row changed, moved or went away: what /decide must read again. */
function changedDistinctIds(plan: PersonPlan): string[] {
  const ids = new Set<string>()
  for (const p of plan.upserts) for (const d of p.distinctIds) ids.add(d)
  for (const m of plan.distinctIdMoves) ids.add(m.distinctId)
  return [...ids]
}

// Fixed namespace of the personless person ids (any constant works; it must never change).
const PERSONLESS_NAMESPACE = Buffer.from('6b0fd3a3b25c4a3c9c7e51f4d2ab6a51', 'hex')

/**
 * The stable person id of a distinct id's personless events (a name-based UUID, version 5, of the
 * project and distinct id, as PostHog derives it): the same id in every batch, so an override can
 * point the events at the person the distinct id gets later.
 */
export function personlessPersonId(projectId: number, distinctId: string): string {
  const h = createHash('sha1').update(PERSONLESS_NAMESPACE).update(`${projectId}:${distinctId}`).digest()
  h[6] = (h[6]! & 0x0f) | 0x50
  h[8] = (h[8]! & 0x3f) | 0x80
  const x = h.subarray(0, 16).toString('hex')
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`
}
