import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import type { TestApp } from './test-app.ts'

/** A rrweb event as posthog-js records it (only the fields the tests need). */
export interface RrwebEventJson {
  type: number
  timestamp: number
  data: Record<string, unknown>
}

/** A small posthog-js recording: meta, full snapshot, a click, a keypress, a console error, idle, a scroll. */
export function aRecording(startMs: number, opts: { href?: string; clicks?: number } = {}): RrwebEventJson[] {
  const events: RrwebEventJson[] = [
    { type: 4, timestamp: startMs, data: { href: opts.href ?? 'https://app.example.com/start', width: 1280, height: 720 } },
    { type: 2, timestamp: startMs + 1, data: { node: { type: 0, childNodes: [], id: 1 }, initialOffset: { top: 0, left: 0 } } },
  ]
  for (let i = 0; i < (opts.clicks ?? 1); i++) events.push({ type: 3, timestamp: startMs + 1000 + i, data: { source: 2, type: 2, id: 5, x: 10, y: 10 } })
  events.push({ type: 3, timestamp: startMs + 2000, data: { source: 5, text: '***', isChecked: false, id: 7 } })
  events.push({ type: 6, timestamp: startMs + 3000, data: { plugin: 'rrweb/console@1', payload: { level: 'error', payload: ['"boom"'], trace: [] } } })
  events.push({ type: 3, timestamp: startMs + 20_000, data: { source: 3, id: 1, x: 0, y: 200 } })
  return events
}

/** posthog-js's `/s/` body: an array of `$snapshot` events for one session and window. */
export function aSnapshotBatch(token: string, sessionId: string, rrweb: RrwebEventJson[], opts: { windowId?: string; distinctId?: string } = {}) {
  return [
    {
      event: '$snapshot',
      properties: {
        $snapshot_data: rrweb,
        $session_id: sessionId,
        $window_id: opts.windowId ?? `${sessionId}-w`,
        $snapshot_bytes: JSON.stringify(rrweb).length,
        distinct_id: opts.distinctId ?? 'replay-user',
        token,
        $lib: 'web',
        $lib_version: '1.449.2',
      },
      timestamp: new Date().toISOString(),
      uuid: crypto.randomUUID(),
    },
  ]
}

/** Every `[windowId, event]` line stored for a session, read straight from its file in the data dir. */
export async function readSessionFile(app: TestApp, sessionId: string): Promise<[string, RrwebEventJson][]> {
  const file = path.join(app.dataDir, 'recordings', 'sessions', String(app.projectId), `${sessionId}.rrweb`)
  const text = gunzipSync(await readFile(file)).toString('utf8')
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as [string, RrwebEventJson])
}

/** Posts a `/s/` batch as posthog-js does (gzip, text/plain) and checks the 200. */
export async function postRecording(app: TestApp, sessionId: string, rrweb: RrwebEventJson[], opts: { token?: string; windowId?: string; distinctId?: string } = {}) {
  const body = gzipSync(Buffer.from(JSON.stringify(aSnapshotBatch(opts.token ?? app.projectKey, sessionId, rrweb, opts))))
  const res = await app.http.inject({ method: 'POST', url: '/s/', headers: { 'content-type': 'text/plain' }, payload: body })
  if (res.statusCode !== 200) throw new Error(`/s/ answered ${res.statusCode}: ${res.body}`)
}

/** The session_recordings list of the test project (`query` as the API takes it), once the worker has caught up. */
export async function listRecordings(app: TestApp, query: Record<string, string> = {}, headers = app.auth, projectId = app.projectId) {
  if (!(await app.replay.drain(10_000))) throw new Error('the recording queue did not drain')
  const res = await app.http.inject({ method: 'GET', url: `/api/projects/${projectId}/session_recordings/?${new URLSearchParams(query)}`, headers })
  if (res.statusCode !== 200) throw new Error(`session_recordings answered ${res.statusCode}: ${res.body}`)
  return res.json() as { results: Record<string, any>[]; has_next: boolean }
}
