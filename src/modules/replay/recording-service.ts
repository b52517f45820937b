import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import { AppError } from '../../shared/errors.ts'
import type { Project } from '../projects/project-types.ts'
import type { RecordingBlobStore } from './recording-blob-store.ts'
import type { RecordingFilter, RecordingMeta, RecordingStore, StoredBlock } from './recording-store.ts'

const gunzipAsync = promisify(gunzip)

/** An events-performed condition: sessions with an event of this name matching these property filters. */
export interface EventCondition {
  event: string | null
  properties: unknown[]
}

/** Finds the sessions (`$session_id`) in which events matching a condition happened (the EventStore). */
export interface SessionEventMatcher {
  sessionsWithEvent(project: Project, condition: EventCondition, range: { from: Date | null; to: Date | null }): Promise<string[]>
}

/** Blocks served in one snapshots response at most (PostHog allows 20 blob keys per request). */
export const MAX_BLOCKS_PER_REQUEST = 20

/**
 * Session recordings of a project: the list with its filters, one recording's metadata, its
 * snapshot sources and blocks, deletion (one, a person's, the expired). Every read names the
 * project, so a recording is never served to another project.
 */
export function createRecordingService(deps: { store: RecordingStore; blobs: RecordingBlobStore; events: SessionEventMatcher }) {
  async function mustGet(project: Project, sessionId: string): Promise<RecordingMeta> {
    const meta = await deps.store.get(project.id, sessionId)
    if (!meta) throw new AppError('not_found', 'Not found.')
    return meta
  }

  return {
    async list(project: Project, filter: RecordingFilter, events: EventCondition[]) {
      let sessionIds = filter.sessionIds
      for (const condition of events) {
        const found = await deps.events.sessionsWithEvent(project, condition, { from: filter.dateFrom, to: filter.dateTo })
        sessionIds = sessionIds === null ? found : sessionIds.filter((id) => found.includes(id))
      }
      return deps.store.list(project.id, { ...filter, sessionIds })
    },

    get: mustGet,

    /** The blocks of a recording, in time order (what `sources` lists; a blob key is the index). */
    async sources(project: Project, sessionId: string): Promise<StoredBlock[]> {
      await mustGet(project, sessionId)
      return deps.store.blocks(project.id, sessionId)
    },

    /** The JSON lines (`[windowId, event]`) of blocks `start..end` (blob keys, inclusive). */
    async blockLines(project: Project, sessionId: string, start: number, end: number): Promise<Buffer> {
      if (end < start || end - start + 1 > MAX_BLOCKS_PER_REQUEST) {
        throw new AppError('validation_error', `Ask for at most ${MAX_BLOCKS_PER_REQUEST} blocks at once, start_blob_key first.`, 'end_blob_key', { subCode: 'invalid_input' })
      }
      const wanted = await deps.store.blocks(project.id, sessionId, { offset: start, limit: end - start + 1 })
      if (wanted.length === 0) throw new AppError('not_found', 'Not found.')
      const parts: Buffer[] = []
      // Blocks next to each other in the session file are read with one read and inflated with one
      // gunzip (a gzip stream may hold several members).
      for (let i = 0; i < wanted.length; ) {
        let j = i
        while (j + 1 < wanted.length && wanted[j + 1]!.offset === wanted[j]!.offset + wanted[j]!.length) j++
        const first = wanted[i]!
        const raw = await deps.blobs.readBlock({ ...first, length: wanted[j]!.offset + wanted[j]!.length - first.offset })
        if (!raw) throw new AppError('not_found', 'Not found.')
        parts.push(await gunzipAsync(raw))
        i = j + 1
      }
      return Buffer.concat(parts)
    },

    /** Deletes one recording (its rows, then its file). */
    async delete(project: Project, sessionId: string): Promise<void> {
      await mustGet(project, sessionId)
      await deps.store.deleteSessions(project.id, [sessionId])
      await deps.blobs.deleteSessions(project.id, [sessionId])
    },

    /** Deletes every recording of these distinct ids (a person deleted with `delete_recordings`). */
    async deleteForDistinctIds(projectId: number, distinctIds: readonly string[]): Promise<number> {
      const ids = await deps.store.sessionsOfDistinctIds(projectId, distinctIds)
      const deleted = await deps.store.deleteSessions(projectId, ids)
      await deps.blobs.deleteSessions(projectId, ids)
      return deleted.length
    },

    /** Deletes recordings past their project's retention; returns how many. */
    async deleteExpired(now: Date): Promise<number> {
      let total = 0
      for (;;) {
        const expired = await deps.store.expired(now, 500)
        if (expired.length === 0) return total
        const byProject = new Map<number, string[]>()
        for (const e of expired) byProject.set(e.projectId, [...(byProject.get(e.projectId) ?? []), e.sessionId])
        for (const [projectId, ids] of byProject) {
          total += (await deps.store.deleteSessions(projectId, ids)).length
          await deps.blobs.deleteSessions(projectId, ids)
        }
      }
    },
  }
}

export type RecordingService = ReturnType<typeof createRecordingService>
