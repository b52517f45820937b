import { mkdir, open, readdir, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import type { BlockLocation, RecordingBlobStore } from '../../modules/replay/recording-blob-store.ts'
import { crashPoint } from '../../shared/crash-points.ts'

/**
 * RecordingBlobStore on local disk: `<dir>/<projectId>/<sessionId>.rrweb` per session, blocks
 * appended and fsync'd (the directory too, when the file is new). The offset of a block is the
 * file's size when its append starts, so a torn append (crash, failed write) leaves bytes no
 * location points at. Session ids are checked to be file-name safe before they reach here.
 */
export function createFileRecordingBlobStore(dir: string): RecordingBlobStore {
  const tails = new Map<string, Promise<unknown>>()

  function fileOf(projectId: number, sessionId: string) {
    return path.join(dir, String(projectId), `${sessionId}.rrweb`)
  }

  /** Runs `fn` after every earlier append to the same file (one writer per session file). */
  function serialised<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = tails.get(key) ?? Promise.resolve()
    const run = prev.then(fn, fn)
    const tail = run.catch(() => undefined)
    tails.set(key, tail)
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key)
    })
    return run
  }

  async function syncDir(d: string) {
    const h = await open(d, 'r')
    try {
      await h.sync()
    } finally {
      await h.close()
    }
  }

  return {
    appendBlock(projectId, sessionId, data) {
      const file = fileOf(projectId, sessionId)
      return serialised(file, async () => {
        const projectDir = path.dirname(file)
        await mkdir(projectDir, { recursive: true })
        const h = await open(file, 'a')
        let offset: number
        let isNew: boolean
        try {
          offset = (await h.stat()).size
          isNew = offset === 0
          await h.write(data, 0, data.length)
          crashPoint('replay.block-written')
          await h.datasync()
        } finally {
          await h.close()
        }
        if (isNew) {
          await syncDir(projectDir)
          await syncDir(dir)
        }
        return { projectId, sessionId, offset, length: data.length }
      })
    },

    async readBlock(loc: BlockLocation) {
      let h
      try {
        h = await open(fileOf(loc.projectId, loc.sessionId), 'r')
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
        throw err
      }
      try {
        const buf = Buffer.allocUnsafe(loc.length)
        const { bytesRead } = await h.read(buf, 0, loc.length, loc.offset)
        return bytesRead === loc.length ? buf : null
      } finally {
        await h.close()
      }
    },

    async deleteSessions(projectId, sessionIds) {
      for (const id of sessionIds) {
        const file = fileOf(projectId, id)
        await serialised(file, () => rm(file, { force: true }))
      }
    },

    async diskBytes() {
      let total = 0
      const projects = await readdir(dir).catch(() => [] as string[])
      for (const p of projects) {
        const files = await readdir(path.join(dir, p)).catch(() => [] as string[])
        for (const f of files) total += (await stat(path.join(dir, p, f)).catch(() => ({ size: 0 }))).size
      }
      return total
    },
  }
}
