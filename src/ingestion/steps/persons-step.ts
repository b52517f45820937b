import { createHash, randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { distinctIdsToLookUp, planPersonUpdates, type PersonEvent, type PersonPlan } from '../../domain/persons/index.ts'
import type { StoredEvent } from '../event-store.ts'
import type { PersonOverrideStore, PersonStore } from '../person-store.ts'
import { dlq, drop, ok, type BatchStep, type StepResult } from '../results.ts'

export interface PersonsStepDeps {
  persons: PersonStore
  overrides: PersonOverrideStore
  /** /decide's person cache: told every distinct id whose person changed, after the commit. */
  cache: { invalidatePersons(projectId: number, distinctIds: readonly string[]): void }
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
      const byProject = new Map<number, { index: number[]; events: PersonEvent[] }>()
      for (let i = 0; i < batch.length; i++) {
        const e = batch[i]!
        let properties: Record<string, unknown>
        try {
          properties = JSON.parse(e.properties) as Record<string, unknown>
        } catch (err) {
          results[i] = dlq('unreadable_properties', err)
          continue
        }
        if (properties === null || typeof properties !== 'object' || Array.isArray(properties)) {
          results[i] = dlq('unreadable_properties')
          continue
        }
        let group = byProject.get(e.projectId)
        if (group === undefined) byProject.set(e.projectId, (group = { index: [], events: [] }))
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
        await deps.persons.apply(projectId, plan)
        deps.cache.invalidatePersons(projectId, changedDistinctIds(plan))
        if (plan.warnings.length > 0) {
          deps.logger?.warn({ projectId, warnings: plan.warnings.slice(0, 20), count: plan.warnings.length }, 'person processing warnings')
        }
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
          const source = batch[i]!
          let properties = source.properties
          if (r.personMode !== 'full') {
            const props = group.events[k]!.properties
            if (PERSON_UPDATE_KEYS.some((key) => Object.hasOwn(props, key))) {
              const rest = { ...props }
              for (const key of PERSON_UPDATE_KEYS) delete rest[key]
              properties = JSON.stringify(rest)
            }
          }
          results[i] = ok({ ...source, properties, personId: r.personId, personProperties: text })
        }
      }
      return results
    },
  }
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
