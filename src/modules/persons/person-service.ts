import { randomBytes } from 'node:crypto'
import { normaliseEvent } from '../../domain/events/index.ts'
import { encodeQueuedEvent } from '../../ingestion/queued-event.ts'
import type { EventQueue } from '../../queue/event-queue.ts'
import { AppError, validationError } from '../../shared/errors.ts'
import { newUuid } from '../../shared/ids.ts'
import type { Page } from '../../shared/page.ts'
import { systemClock, type Clock } from '../../shared/clock.ts'
import type { Project } from '../projects/project-types.ts'
import type { PersonEventStore, PersonStore } from './person-store.ts'
import type { Person, PersonListQuery, PersonPropertyValue } from './person-types.ts'
import { sortedDistinctIds } from './person-json.ts'

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i
const MAX_BIGINT = 9_223_372_036_854_775_807n

/** Deletes the recordings of these distinct ids; resolves with how many. */
export type RecordingEraser = (projectId: number, distinctIds: readonly string[]) => Promise<number>

export interface PersonServiceDeps {
  store: PersonStore
  events: PersonEventStore
  /** Where property changes go: they are events through the pipeline, as PostHog's API sends them. */
  queue: Pick<EventQueue, 'publish'>
  /** /decide's person cache: told the distinct ids of a deleted person. */
  cache: { invalidatePersons(projectId: number, distinctIds: readonly string[]): void }
  clock?: Clock
}

/**
 * A person reference from a path, as PostHog's `get_pk_or_uuid`: the numeric pk or the uuid.
 * Anything else is a 400 that points at the distinct-id filter (PostHog's message).
 */
export function parsePersonRef(raw: string): { id: number } | { uuid: string } {
  if (/^\d{1,19}$/.test(raw) && BigInt(raw) <= MAX_BIGINT) return { id: Number(raw) }
  if (UUID.test(raw)) return { uuid: raw.toLowerCase() }
  throw validationError(
    null,
    `The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id=${raw.slice(0, 200)} instead.`,
    'invalid',
  )
}

/**
 * The persons API: reads through the store; property changes become `$set` /
 * `$delete_person_property` events on the queue (PostHog's `capture_internal`), so they are
 * ordered with the person's other events by the one pipeline that writes persons; deletion removes
 * the person at once (and, when asked, every event that resolves to it).
 */
export function createPersonService(deps: PersonServiceDeps) {
  const clock = deps.clock ?? systemClock

  let recordingEraser: RecordingEraser | null = null

  async function get(project: Project, ref: string): Promise<Person> {
    const person = await deps.store.find(project.id, parsePersonRef(ref))
    if (!person) throw new AppError('not_found', 'Not found.')
    return person
  }

  /** Puts one server-made event for the person's first distinct id on the queue. */
  async function sendEvent(project: Project, person: Person, event: string, properties: Record<string, unknown>) {
    const distinctId = sortedDistinctIds(person.distinctIds)[0]
    if (distinctId === undefined) throw validationError(null, 'This person has no distinct id to send the change under.', 'invalid')
    const now = new Date(clock.now())
    const raw = { event, distinct_id: distinctId, uuid: newUuid(), timestamp: now.toISOString(), properties: { ...properties, $process_person_profile: true } }
    const result = normaliseEvent(raw, { now, randomBytes: (n) => randomBytes(n) })
    if (result.kind === 'drop') throw new Error(`a ${event} event was dropped: ${result.reason}`)
    try {
      await deps.queue.publish([encodeQueuedEvent(project.id, result.event)])
    } catch (err) {
      throw new AppError('service_unavailable', 'The change could not be stored right now; retry later.', null, { retryAfterSeconds: 5, cause: err })
    }
  }

  return {
    get,

    /** Who deletes a person's recordings (`delete_recordings=true`): session replay, once it is set up. */
    setRecordingEraser(eraser: RecordingEraser | null) {
      recordingEraser = eraser
    },

    /** A page of persons (one row more than the page, to know whether a next page exists). */
    async list(project: Project, query: PersonListQuery, page: Page): Promise<{ persons: Person[]; hasMore: boolean }> {
      const rows = await deps.store.list(project.id, query, { limit: page.limit + 1, offset: page.offset })
      return { persons: rows.slice(0, page.limit), hasMore: rows.length > page.limit }
    },

    count: (project: Project, query: PersonListQuery) => deps.store.count(project.id, query),

    /** `$set`s the properties on the person (PostHog's PATCH and `update_property`). */
    async setProperties(project: Project, ref: string, properties: Record<string, unknown>): Promise<void> {
      await sendEvent(project, await get(project, ref), '$set', { $set: properties })
    },

    /** `$unset`s one property (PostHog's `delete_property` sends `$delete_person_property`). */
    async deleteProperty(project: Project, ref: string, key: string): Promise<void> {
      await sendEvent(project, await get(project, ref), '$delete_person_property', { $unset: [key] })
    },

    /**
     * Deletes the person and its distinct ids (a later event of one of them makes a new person), drops
     * them from /decide's cache, and with `deleteEvents` removes every event that resolves to it.
     * Events of the person still in the queue when it is deleted are stored afterwards (under the
     * deleted person's id, or a new person's): PostHog's deletion has the same window.
     */
    async delete(project: Project, ref: string, opts: { deleteEvents: boolean; deleteRecordings?: boolean }): Promise<{ deletedEvents: number; deletedRecordings: number }> {
      const person = await get(project, ref)
      // Events first: if that fails, the person is still there and the request can be sent again.
      let deletedEvents = opts.deleteEvents ? await deps.events.deletePersonEvents(project.id, person.uuid) : 0
      const deleted = await deps.store.delete(project.id, person.id)
      if (!deleted) throw new AppError('not_found', 'Not found.')
      deps.cache.invalidatePersons(project.id, deleted.distinctIds)
      // Again after the person is gone: events the pipeline stored for it in between.
      if (opts.deleteEvents) deletedEvents += await deps.events.deletePersonEvents(project.id, person.uuid)
      const deletedRecordings = opts.deleteRecordings && recordingEraser ? await recordingEraser(project.id, deleted.distinctIds) : 0
      return { deletedEvents, deletedRecordings }
    },

    /** Values of a person property with their person counts (`/persons/values/?key=&value=`). */
    values(project: Project, key: string, search: string | undefined): Promise<PersonPropertyValue[]> {
      return deps.store.propertyValues(project.id, key, { search, limit: 1000 })
    },
  }
}

export type PersonService = ReturnType<typeof createPersonService>
