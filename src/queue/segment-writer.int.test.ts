import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { recoverLog, segmentPath } from './segment-log.ts'
import { SegmentWriter, type FlushedGroup, type SegmentWriterOptions } from './segment-writer.ts'

const root = await mkdtemp(path.join(os.tmpdir(), 'tally-writer-test-'))
after(() => rm(root, { recursive: true, force: true }))
let n = 0

/** A writer on a fresh (or given) directory, the groups it reports, and a cleanup. */
async function openWriter(t: { after(fn: () => Promise<void>): void }, opts: Partial<SegmentWriterOptions> = {}) {
  const dir = opts.dir ?? path.join(root, `w${++n}`)
  const groups: FlushedGroup[] = []
  let durableCalls = 0
  const writer = new SegmentWriter({
    dir,
    log: await recoverLog(dir),
    segmentBytes: 64 * 1024 * 1024,
    onWritten: (g) => void groups.push(g),
    onDurable: () => void durableCalls++,
    ...opts,
  })
  t.after(async () => {
    await writer.stop()
    await writer.closeFile()
  })
  return { dir, writer, groups, durableCalls: () => durableCalls }
}

const logFiles = async (dir: string) => (await readdir(dir)).filter((f) => f.endsWith('.log')).sort()

test('segment writer: concurrent publishes share group commits, and each resolves only once its messages are in the file', async (t) => {
  const { dir, writer, groups, durableCalls } = await openWriter(t)
  const file = segmentPath(dir, 1)
  const seenOnResolve: boolean[] = []
  await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      writer.publish([`m${i}`, `m${i}b`]).then(() => {
        // Resolved: the write (and fdatasync) is done, so the file holds the whole record.
        seenOnResolve.push(readFileSync(file, 'utf8').includes(`\nm${i}b\n`) || readFileSync(file, 'utf8').startsWith(`m${i}\nm${i}b\n`))
      }),
    ),
  )
  assert.equal(seenOnResolve.length, 200)
  assert.ok(seenOnResolve.every(Boolean))
  assert.equal(writer.published, 400)
  assert.ok(writer.flushes < 20, `expected few flushes, got ${writer.flushes}`)
  assert.equal(groups.length, writer.flushes)
  assert.equal(durableCalls(), writer.flushes)
  // One group per flush, one entry per publish, in publish order, at consecutive offsets.
  assert.deepEqual(groups.flatMap((g) => g.messages.flat()), Array.from({ length: 200 }, (_, i) => [`m${i}`, `m${i}b`]).flat())
  let off = 0
  for (const g of groups) {
    assert.equal(g.start, off)
    assert.equal(g.ends.at(-1), g.bytes)
    off += g.bytes
  }
  const text = await readFile(file, 'utf8')
  assert.equal(text, Array.from({ length: 200 }, (_, i) => `m${i}\nm${i}b\n`).join(''))
  assert.deepEqual(writer.durable(), { seg: 1, off: Buffer.byteLength(text) })
})

test('segment writer: starts a new segment once the current one would pass segmentBytes, and seals the old one with its size', async (t) => {
  const { dir, writer, groups } = await openWriter(t, { segmentBytes: 40 })
  for (let i = 0; i < 10; i++) await writer.publish([`record-${i}-é`]) // 13 bytes each with '\n'
  const files = await logFiles(dir)
  assert.ok(files.length >= 3, files.join(','))
  assert.deepEqual([...writer.sealed.keys()], files.slice(0, -1).map((f) => Number(f.slice(0, -4))))
  for (const [seg, size] of writer.sealed) {
    assert.equal((await stat(segmentPath(dir, seg))).size, size)
    assert.ok(size <= 40)
  }
  const all = (await Promise.all(files.map((f) => readFile(path.join(dir, f), 'utf8')))).join('')
  assert.equal(all, Array.from({ length: 10 }, (_, i) => `record-${i}-é\n`).join(''))
  const last = groups.at(-1)!
  assert.deepEqual(writer.durable(), { seg: last.seg, off: last.start + last.bytes })
  assert.equal(last.seg, files.length)
})

test('segment writer: a publish after stop is refused; an empty publish resolves without a flush', async (t) => {
  const { writer } = await openWriter(t)
  await writer.publish([])
  assert.equal(writer.flushes, 0)
  await writer.stop()
  await assert.rejects(writer.publish(['late']), /closed/)
})

test('segment writer: a failed write (no space) is cut off the file, rejects its publishers, blocks writeState until the probe succeeds', async (t) => {
  const mount = await mkdtemp(path.join(os.tmpdir(), 'tally-writer-tmpfs-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount])
  t.after(async () => {
    execFileSync('umount', ['-l', mount])
    await rm(mount, { recursive: true, force: true })
  })
  const { dir, writer, groups } = await openWriter(t, { dir: path.join(mount, 'q'), probeMinMs: 5, probeMaxMs: 20 })
  await writeFile(path.join(mount, 'filler'), Buffer.alloc(512 * 1024))
  let failure: unknown = null
  let accepted = 0
  for (let i = 0; i < 200 && !failure; i++) {
    // Two publishers in the same group: both are refused together.
    const both = await Promise.allSettled([writer.publish([`a${i}-${'p'.repeat(4000)}`]), writer.publish([`b${i}-${'p'.repeat(4000)}`])])
    if (both.every((r) => r.status === 'fulfilled')) accepted += 2
    else {
      assert.deepEqual(both.map((r) => r.status), ['rejected', 'rejected'])
      failure = (both[0] as PromiseRejectedResult).reason
    }
  }
  assert.equal((failure as { code?: string } | null)?.code, 'ENOSPC')
  assert.equal(writer.published, accepted)
  // Nothing of the refused write is left in the file: it ends at the durable position, on a whole record.
  const durable = writer.durable()
  const size = (await stat(segmentPath(dir, durable.seg))).size
  assert.equal(size, durable.off)
  assert.deepEqual(groups.reduce((s, g) => s + g.messages.flat().length, 0), accepted)
  const state = writer.writeState()
  assert.equal(state.writable, false)
  assert.match(state.reason!, /ENOSPC/)
  assert.ok(!Number.isNaN(Date.parse(state.since!)))

  await rm(path.join(mount, 'filler'))
  while (!writer.writeState().writable) await new Promise((r) => setTimeout(r, 5))
  assert.deepEqual(writer.writeState(), { writable: true, reason: null, since: null })
  await writer.publish(['after'])
  const files = await logFiles(dir)
  const last = await readFile(path.join(dir, files.at(-1)!), 'utf8')
  assert.ok(last.endsWith('\nafter\n') || last === 'after\n')
  assert.ok(!(await readdir(dir)).includes('write-probe.tmp'), 'the probe file is removed')
})
