import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test, type TestContext } from 'node:test'
import type { RecordingBlobStore } from '../../src/modules/replay/recording-blob-store.ts'
import { createFileRecordingBlobStore } from '../../src/storage/files/file-recording-blob-store.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** The store under test on one database and one files dir, appending to either. */
export type BlobStoreFor = (appendTo: 'database' | 'files') => RecordingBlobStore

/** What the recording-bytes store promises: blocks in the database or in files, each readable whichever setting wrote it. */
export function recordingBlobStoreContract(name: string, open: (files: RecordingBlobStore) => ReturnType<OpenInWorld<BlobStoreFor>>): void {
  const openStores = async (t: TestContext) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-blobs-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const { port, world, close } = await open(createFileRecordingBlobStore(dir))
    t.after(close)
    return { storeFor: port, projectId: world.projectId, otherProjectId: world.otherProjectId }
  }

  for (const appendTo of ['database', 'files'] as const) {
    test(`${name} recording bytes (appending to ${appendTo}): blocks read back byte for byte, each from its own location, binary-safe`, async (t) => {
      const { storeFor, projectId } = await openStores(t)
      const blobs = storeFor(appendTo)
      const a = Buffer.from([0x1f, 0x8b, 0x00, 0xff, 0x27, 0x5c, 0x0a])
      const b = Buffer.alloc(300_000, 0xab)
      const la = await blobs.appendBlock(projectId, 's1', a)
      const lb = await blobs.appendBlock(projectId, 's1', b)
      assert.notDeepEqual(la, lb)
      assert.equal(la.offset < 0, appendTo === 'database', 'database blocks have negative offsets, file blocks not')
      assert.deepEqual(await blobs.readBlock(la), a)
      assert.deepEqual(await blobs.readBlock(lb), b)
      assert.equal(la.length, a.length)
    })

    test(`${name} recording bytes (appending to ${appendTo}): a location of another session or project reads nothing`, async (t) => {
      const { storeFor, projectId, otherProjectId } = await openStores(t)
      const blobs = storeFor(appendTo)
      const loc = await blobs.appendBlock(projectId, 's1', Buffer.from('block'))
      assert.equal(await blobs.readBlock({ ...loc, sessionId: 's2' }), null)
      assert.equal(await blobs.readBlock({ ...loc, projectId: otherProjectId }), null)
      // A row is one block: a location that disagrees with its length is not it (a file's range may be any).
      if (appendTo === 'database') assert.equal(await blobs.readBlock({ ...loc, length: 4 }), null)
    })
  }

  test(`${name} recording bytes: blocks written under either setting are read under both, and deleting a session removes both kinds`, async (t) => {
    const { storeFor, projectId } = await openStores(t)
    const [database, files] = [storeFor('database'), storeFor('files')]
    const inFile = await files.appendBlock(projectId, 's1', Buffer.from('in a session file'))
    const inRow = await database.appendBlock(projectId, 's1', Buffer.from('in the database'))
    const kept = await database.appendBlock(projectId, 's2', Buffer.from('another session'))
    for (const blobs of [database, files]) {
      assert.equal((await blobs.readBlock(inFile))?.toString(), 'in a session file')
      assert.equal((await blobs.readBlock(inRow))?.toString(), 'in the database')
    }
    assert.ok((await database.diskBytes()) > 0)
    await files.deleteSessions(projectId, ['s1', 'missing'])
    assert.equal(await database.readBlock(inFile), null)
    assert.equal(await database.readBlock(inRow), null)
    assert.equal((await database.readBlock(kept))?.toString(), 'another session')
  })
}
