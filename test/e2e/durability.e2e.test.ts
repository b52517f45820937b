import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { gzipSync } from 'node:zlib'
import { testEnv } from '../helpers/test-app.ts'
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

async function sendBatches(server: ServerProcess, token: string, requests: number, perRequest: number): Promise<string[]> {
  const uuids: string[] = []
  await Promise.all(
    Array.from({ length: requests }, async (_, r) => {
      const batch = Array.from({ length: perRequest }, (_, i) => {
        const uuid = crypto.randomUUID()
        uuids.push(uuid)
        return { event: 'durable', distinct_id: `user-${r}`, uuid, properties: { r, i } }
      })
      const res = await fetch(`${server.url}/batch/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gzipSync(JSON.stringify({ api_key: token, batch })),
      })
      assert.equal(res.status, 200)
    }),
  )
  return uuids
}

async function readStoredUuids(server: ServerProcess, personalKey: string, expected: number): Promise<Set<string>> {
  const headers = { authorization: `Bearer ${personalKey}` }
  const projects = (await (await fetch(`${server.url}/api/projects/`, { headers })).json()) as { results: Array<{ id: number }> }
  const projectId = projects.results[0]!.id
  let seen = new Set<string>()
  for (let attempt = 0; attempt < 400 && seen.size < expected; attempt++) {
    seen = new Set()
    let url: string | null = `${server.url}/api/projects/${projectId}/events/?event=durable&limit=1000`
    while (url) {
      const page = (await (await fetch(url, { headers })).json()) as { next: string | null; results: Array<{ id: string }> }
      for (const e of page.results) seen.add(e.id)
      url = page.next
    }
    if (seen.size < expected) await new Promise((r) => setTimeout(r, 50))
  }
  return seen
}

for (const [label, workerEnv] of [
  ['while the events are still in the queue', { TALLY_FLUSH_INTERVAL_MS: '10000' }],
  ['while the worker is storing them', {}],
] as const) {
  test(`kill -9 right after the 200s loses no acknowledged event (${label})`, async (t) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-durability-'))
    t.after(() => rm(dataDir, { recursive: true, force: true }))
    const env = testEnv(dataDir)
    const keys = { TALLY_PROJECT_API_KEY: env.TALLY_PROJECT_API_KEY, TALLY_PERSONAL_API_KEY: env.TALLY_PERSONAL_API_KEY }

    const first = await startServerProcess(dataDir, { ...keys, ...workerEnv })
    const uuids = await sendBatches(first, keys.TALLY_PROJECT_API_KEY, 40, 25)
    first.child.kill('SIGKILL')
    await first.exited

    const second = await startServerProcess(dataDir, keys)
    t.after(async () => {
      second.child.kill('SIGTERM')
      await second.exited
    })
    const stored = await readStoredUuids(second, keys.TALLY_PERSONAL_API_KEY, uuids.length)
    const missing = uuids.filter((u) => !stored.has(u))
    assert.deepEqual(missing, [])
    assert.equal(stored.size, uuids.length)
  })
}
