import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from '../config/load-config.ts'
import { openFileEventQueue } from '../queue/file-event-queue.ts'
import { createFileRecordingBlobStore } from '../storage/files/file-recording-blob-store.ts'
import { createRecordingCaptureService } from '../modules/replay/recording-capture-service.ts'
import { recordingCaptureRoutes } from '../modules/replay/recording-capture-routes.ts'
import type { ProjectService } from '../modules/projects/project-service.ts'

/** Session replay as the composition root assembles it: its stores, worker and routes. */
export interface Replay {
  /** Registers `/s/` in the public scope. */
  publicRoutes(scope: FastifyInstance): Promise<void>
  /** Registers the session_recordings API in the private scope. */
  privateRoutes(scope: FastifyInstance): Promise<void>
  close(): Promise<void>
}

/**
 * Embedded replay stores: session files under `<dataDir>/recordings/sessions`, and the recording
 * queue (block summaries between `/s/` and the metadata worker) under `<dataDir>/recordings/queue`.
 */
export async function createReplay(config: Pick<Config, 'storage' | 'replay'>, deps: { projects: ProjectService; logger: Logger }): Promise<Replay> {
  const dir = path.join(config.storage.dataDir, 'recordings')
  const queue = await openFileEventQueue({ dir: path.join(dir, 'queue'), logger: deps.logger.child({ module: 'replay-queue' }) })
  const blobs = createFileRecordingBlobStore(path.join(dir, 'sessions'))
  const capture = createRecordingCaptureService({ projects: deps.projects, blobs, queue })
  return {
    async publicRoutes(scope) {
      await scope.register(recordingCaptureRoutes, {
        capture,
        maxBodyBytes: config.replay.maxBodyBytes,
        maxDecodedBytes: config.replay.maxBodyBytes * 4,
        memoryBudgetBytes: config.replay.memoryBudgetBytes,
      })
    },
    async privateRoutes() {},
    async close() {
      await queue.close()
    },
  }
}
