import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test, type TestContext } from 'node:test'
import type { RecordingBlobStore } from '../../src/modules/replay/recording-blob-store.ts'
import { createFileRecordingBlobStore } from '../../src/storage/files/file-recording-blob-store.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** A blob store under test and the file store it falls back to for locations written before it. */
export interface BlobStores {
  blobs: RecordingBlobStore
  files: RecordingBlobStore
}

/** A session-file store in a temp dir, removed when the test ends. */
export async function tempFileBlobStore(t: TestContext): Promise<RecordingBlobStore> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-blobs-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return createFileRecordingBlobStore(dir)
}

/** What the database RecordingBlobStore promises (the recording bytes every process of a cluster reads). */
export function recordingBlobStoreContract(name: string, open: (files: RecordingBlobStore) => ReturnType<OpenInWorld<RecordingBlobStore>>): void {
  const openBoth = async (t: TestContext): Promise<BlobStores & { projectId: number; otherProjectId: number }> => {
    const files = await tempFileBlobStore(t)
    const { port, world, close } = await open(files)
    t.after(close)
    return { blobs: port, files, projectId: world.projectId, otherProjectId: world.otherProjectId }
  }

  test(`${name} recording bytes: blocks read back byte for byte, each from its own location, binary-safe`, async (t) => {
    const { blobs, projectId } = await openBoth(t)
    const a = Buffer.from([0x1f, 0x8b, 0x00, 0xff, 0x27, 0x5c, 0x0a])
    const b = Buffer.alloc(300_000, 0xab)
    const la = await blobs.appendBlock(projectId, 's1', a)
    const lb = await blobs.appendBlock(projectId, 's1', b)
    assert.notDeepEqual(la, lb)
    assert.deepEqual(await blobs.readBlock(la), a)
    assert.deepEqual(await blobs.readBlock(lb), b)
    assert.equal(la.length, a.length)
  })

  test(`${name} recording bytes: a location of another session, project or length reads nothing`, async (t) => {
    const { blobs, projectId, otherProjectId } = await openBoth(t)
    const loc = await blobs.appendBlock(projectId, 's1', Buffer.from('block'))
    assert.equal(await blobs.readBlock({ ...loc, sessionId: 's2' }), null)
    assert.equal(await blobs.readBlock({ ...loc, projectId: otherProjectId }), null)
    assert.equal(await blobs.readBlock({ ...loc, length: 4 }), null)
  })

  test(`${name} recording bytes: session files written before the store was chosen stay readable, and deleting a session removes both`, async (t) => {
    const { blobs, files, projectId } = await openBoth(t)
    const old = await files.appendBlock(projectId, 's1', Buffer.from('from the file era'))
    const now = await blobs.appendBlock(projectId, 's1', Buffer.from('from the database'))
    const kept = await blobs.appendBlock(projectId, 's2', Buffer.from('another session'))
    assert.equal((await blobs.readBlock(old))?.toString(), 'from the file era')
    assert.equal((await blobs.readBlock(now))?.toString(), 'from the database')
    const before = await blobs.diskBytes()
    await blobs.deleteSessions(projectId, ['s1', 'missing'])
    assert.equal(await blobs.readBlock(old), null)
    assert.equal(await blobs.readBlock(now), null)
    assert.equal((await blobs.readBlock(kept))?.toString(), 'another session')
    assert.ok(before > 0)
  })
}
