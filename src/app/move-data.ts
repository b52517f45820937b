import { createReadStream, createWriteStream, type WriteStream } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { once } from 'node:events'
import path from 'node:path'
import { createInterface } from 'node:readline'
import type { Config } from '../config/load-config.ts'
import { createAdapters } from './create-adapters.ts'
import { loadTables, metadataTables, readTableRows } from '../storage/sql/metadata-dump.ts'
import type { StoredEvent } from '../ingestion/event-store.ts'
import { createFileRecordingBlobStore } from '../storage/files/file-recording-blob-store.ts'

/**
 * `tally export --out DIR` / `tally import --from DIR`: a whole Tally (metadata with persons and
 * recordings, events, person overrides) written to a directory from the configured stores, and read into others. With the
 * embedded stack configured it reads or fills the data dir (stop the server first); with
 * TALLY_DATABASE_URL and TALLY_CLICKHOUSE_URL, PostgreSQL and ClickHouse. So a data dir moves onto the
 * scale stack (export embedded, import at scale) and back. The directory: manifest.json,
 * metadata/<table>.ndjson (row_to_json of every row), events.ndjson, person_overrides.ndjson.
 * Timestamps travel as milliseconds (ClickHouse's precision).
 */
const FORMAT = 'tally-dump'
const VERSION = 1

interface Manifest {
  format: typeof FORMAT
  version: number
  tables: string[]
  events: number
  overrides: number
}

async function write(out: WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain')
}

async function close(out: WriteStream): Promise<void> {
  out.end()
  await once(out, 'finish')
}

export async function exportCommand(config: Config, opts: { out?: string }): Promise<number> {
  if (!opts.out) {
    console.error('Usage: tally export --out DIR   (the configured stores: the data dir, or PostgreSQL + ClickHouse)')
    return 2
  }
  const dir = opts.out
  await mkdir(path.join(dir, 'metadata'), { recursive: true })
  const stores = await createAdapters(config, { queue: false })
  try {
    const tables = await metadataTables(stores.meta)
    const dumped = new Map<string, string[]>()
    for (const table of tables) dumped.set(table, await readTableRows(stores.meta, table))
    await inlineRecordingFiles(dumped, path.join(config.storage.dataDir, 'recordings', 'sessions'))
    for (const [table, rows] of dumped) await writeFile(path.join(dir, 'metadata', `${table}.ndjson`), rows.map((r) => `${r}\n`).join(''))
    const events = createWriteStream(path.join(dir, 'events.ndjson'))
    let count = 0
    for await (const batch of stores.eventDump.events()) {
      let text = ''
      for (const e of batch) text += `${JSON.stringify({ ...e, timestamp: e.timestamp.toISOString(), createdAt: e.createdAt.toISOString() })}\n`
      await write(events, text)
      count += batch.length
    }
    await close(events)
    const overrides = await stores.eventDump.overrides()
    await writeFile(path.join(dir, 'person_overrides.ndjson'), overrides.map((o) => `${JSON.stringify(o)}\n`).join(''))
    const manifest: Manifest = { format: FORMAT, version: VERSION, tables, events: count, overrides: overrides.length }
    await writeFile(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2))
    console.log(`exported ${tables.length} metadata tables, ${count} events, ${overrides.length} person overrides to ${dir}`)
    return 0
  } finally {
    await stores.close()
  }
}

/**
 * Recording blocks kept in session files of this data dir travel as rows of `session_recording_bytes`
 * (the dump may be imported on another host): each block's bytes become a row with a new id, and its
 * location the row's (`byte_offset` = -id, see sql-recording-blob-store.ts). Blocks whose file is gone
 * keep their location (they list but play nothing, as they did here).
 */
async function inlineRecordingFiles(dumped: Map<string, string[]>, sessionsDir: string): Promise<void> {
  const blocks = dumped.get('session_recording_blocks')
  const bytes = dumped.get('session_recording_bytes')
  if (!blocks || !bytes) return
  const files = createFileRecordingBlobStore(sessionsDir)
  let nextId = 1
  for (const row of bytes) nextId = Math.max(nextId, Number((JSON.parse(row) as { id: number }).id) + 1)
  for (let i = 0; i < blocks.length; i++) {
    const block = JSON.parse(blocks[i]!) as { project_id: number; session_id: string; byte_offset: number; byte_length: number }
    if (block.byte_offset < 0) continue
    const data = await files.readBlock({ projectId: block.project_id, sessionId: block.session_id, offset: block.byte_offset, length: block.byte_length })
    if (!data) continue
    const id = nextId++
    bytes.push(JSON.stringify({ id, project_id: block.project_id, session_id: block.session_id, data: `\\x${data.toString('hex')}` }))
    blocks[i] = JSON.stringify({ ...block, byte_offset: -id })
  }
}

export async function importCommand(config: Config, opts: { from?: string }): Promise<number> {
  if (!opts.from) {
    console.error('Usage: tally import --from DIR   (into the configured stores, which must hold no project yet)')
    return 2
  }
  const dir = opts.from
  const manifest = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest
  if (manifest.format !== FORMAT || manifest.version !== VERSION) {
    console.error(`${dir} is not a tally export (version ${VERSION})`)
    return 2
  }
  const stores = await createAdapters(config, { queue: false })
  try {
    const [{ n }] = await stores.meta.query<{ n: number }>('SELECT count(*)::int AS n FROM projects')
    if (n > 0) {
      console.error('the target already holds projects: import only into fresh stores')
      return 1
    }
    const here = new Set(await metadataTables(stores.meta))
    const missing = manifest.tables.filter((t) => !here.has(t))
    if (missing.length > 0) {
      console.error(`the target lacks tables ${missing.join(', ')}: run a Tally at least as new as the one exported`)
      return 1
    }
    const tables = []
    for (const table of manifest.tables) {
      const text = await readFile(path.join(dir, 'metadata', `${table}.ndjson`), 'utf8')
      tables.push({ table, rows: text.split('\n').filter((l) => l !== '') })
    }
    await loadTables(stores.meta, tables)
    let count = 0
    let batch: StoredEvent[] = []
    const lines = createInterface({ input: createReadStream(path.join(dir, 'events.ndjson')), crlfDelay: Infinity })
    for await (const line of lines) {
      if (line === '') continue
      const e = JSON.parse(line) as StoredEvent & { timestamp: string; createdAt: string }
      batch.push({ ...e, timestamp: new Date(e.timestamp), createdAt: new Date(e.createdAt) })
      if (batch.length >= 10_000) {
        count += batch.length
        await stores.events.insertBatch(batch)
        batch = []
      }
    }
    if (batch.length > 0) {
      count += batch.length
      await stores.events.insertBatch(batch)
    }
    const overrides = (await readFile(path.join(dir, 'person_overrides.ndjson'), 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { projectId: number; oldPersonId: string; overridePersonId: string })
    const byProject = new Map<number, typeof overrides>()
    for (const o of overrides) byProject.set(o.projectId, [...(byProject.get(o.projectId) ?? []), o])
    for (const [projectId, list] of byProject) await stores.personOverrides.write(projectId, list)
    console.log(`imported ${tables.length} metadata tables, ${count} events, ${overrides.length} person overrides from ${dir}`)
    return 0
  } finally {
    await stores.close()
  }
}
