import { api, apiText } from '../api.ts'

/** A rrweb event as served (posthog-js may have gzipped parts of it: `cv: "2024-10"`). */
export interface ReplayEvent {
  type: number
  timestamp: number
  data: any
  windowId?: string
  cv?: string
}

interface SourcesJson {
  sources: { source: string; blob_key: string; start_timestamp: string; end_timestamp: string }[]
}

/** posthog-js 1.4xx packs a full snapshot's and a mutation's parts as gzip in latin1 strings. */
async function gunzipLatin1(value: unknown): Promise<unknown> {
  if (typeof value !== 'string') return value
  const bytes = Uint8Array.from(value, (c) => c.charCodeAt(0))
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))
  return JSON.parse(await new Response(stream).text())
}

/** An event as rrweb's replayer wants it: posthog-js's compressed parts (`cv: "2024-10"`) unpacked. */
async function unpack(e: ReplayEvent): Promise<ReplayEvent> {
  if (e.cv !== '2024-10') return e
  const { cv: _cv, ...rest } = e
  if (e.type === 2) return { ...rest, data: await gunzipLatin1(e.data) }
  if (e.type === 3 && (e.data?.source === 0 || e.data?.source === 8)) {
    const data = { ...e.data }
    for (const key of ['texts', 'attributes', 'removes', 'adds']) if (key in data) data[key] = await gunzipLatin1(data[key])
    return { ...rest, data }
  }
  return rest
}

/**
 * Every event of a recording in time order: the `blob_v2` sources first, then their blocks (20 per
 * request, as PostHog serves them), each line `[windowId, event]`.
 */
export async function loadSnapshots(base: string, sessionId: string): Promise<ReplayEvent[]> {
  const path = `${base}/session_recordings/${encodeURIComponent(sessionId)}/snapshots/`
  const { sources } = await api<SourcesJson>(path)
  const events: ReplayEvent[] = []
  for (let i = 0; i < sources.length; i += 20) {
    const end = Math.min(sources.length, i + 20) - 1
    const text = await apiText(`${path}?source=blob_v2&start_blob_key=${sources[i]!.blob_key}&end_blob_key=${sources[end]!.blob_key}`)
    for (const line of text.split('\n')) {
      if (!line) continue
      const [windowId, event] = JSON.parse(line) as [string, ReplayEvent]
      events.push({ ...(await unpack(event)), windowId })
    }
  }
  return events.sort((a, b) => a.timestamp - b.timestamp)
}

/** A console line recorded by posthog-js's console plugin. */
export interface ConsoleLine {
  timestamp: number
  level: string
  text: string
}

export function consoleLines(events: readonly ReplayEvent[]): ConsoleLine[] {
  return events
    .filter((e) => e.type === 6 && e.data?.plugin === 'rrweb/console@1')
    .map((e) => ({
      timestamp: e.timestamp,
      level: String(e.data.payload?.level ?? 'log'),
      text: (Array.isArray(e.data.payload?.payload) ? e.data.payload.payload : []).map((p: unknown) => (typeof p === 'string' ? p.replace(/^"(.*)"$/s, '$1') : JSON.stringify(p))).join(' '),
    }))
}
