import { ByteWriter, ParquetWriter } from 'hyparquet-writer'
import type { EventRow } from './event-read-store.ts'
import { formatMicros } from './event-json.ts'

/** The formats an export is written in; the table drives the CLI's and the API's checks. */
export const EXPORT_FORMATS = new Map([
  ['parquet', { contentType: 'application/vnd.apache.parquet', extension: 'parquet' }],
  ['csv', { contentType: 'text/csv; charset=utf-8', extension: 'csv' }],
  ['ndjson', { contentType: 'application/x-ndjson', extension: 'ndjson' }],
] as const)
export type ExportFormat = Parameters<typeof EXPORT_FORMATS.get>[0]

export function isExportFormat(v: string): v is ExportFormat {
  return EXPORT_FORMATS.has(v as ExportFormat)
}

/**
 * The columns of every export, in order: PostHog's event fields as its batch exports name them.
 * `timestamp` keeps the stored microseconds; `properties` is the event's JSON object.
 */
export const EXPORT_COLUMNS = ['uuid', 'event', 'distinct_id', 'timestamp', 'person_id', 'properties', 'elements_chain'] as const

/** Rows per Parquet row group: what the writer holds in memory at most. */
const ROW_GROUP_ROWS = 50_000

/**
 * The bytes of an export of `rows` in `format`, produced as the rows arrive: a CSV or NDJSON piece
 * per batch, a Parquet row group per ROW_GROUP_ROWS rows (then the footer), so memory holds one
 * batch or one row group, never the export.
 */
export function encodeEventExport(rows: AsyncIterable<EventRow[]>, format: ExportFormat): AsyncGenerator<Uint8Array> {
  switch (format) {
    case 'csv':
      return encodeText(rows, `${EXPORT_COLUMNS.join(',')}\n`, csvLine)
    case 'ndjson':
      return encodeText(rows, '', ndjsonLine)
    case 'parquet':
      return encodeParquet(rows)
  }
}

async function* encodeText(rows: AsyncIterable<EventRow[]>, header: string, line: (r: EventRow) => string): AsyncGenerator<Uint8Array> {
  if (header) yield Buffer.from(header)
  for await (const batch of rows) {
    let text = ''
    for (const r of batch) text += line(r)
    yield Buffer.from(text)
  }
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
function csvField(v: string | null): string {
  if (v === null) return ''
  return /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v
}

function csvLine(r: EventRow): string {
  return `${[r.uuid, r.event, r.distinctId, formatMicros(r.timestampMicros), r.personId, r.properties, r.elementsChain].map(csvField).join(',')}\n`
}

function ndjsonLine(r: EventRow): string {
  // The stored properties are JSON object text already: written as they are, not parsed again.
  return `{"uuid":${JSON.stringify(r.uuid)},"event":${JSON.stringify(r.event)},"distinct_id":${JSON.stringify(r.distinctId)},"timestamp":"${formatMicros(r.timestampMicros)}","person_id":${JSON.stringify(r.personId)},"properties":${r.properties},"elements_chain":${JSON.stringify(r.elementsChain)}}\n`
}

const text = (name: string, optional = false) =>
  ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: optional ? 'OPTIONAL' : 'REQUIRED' }) as const

/** Parquet's schema of an export: strings, a UTC timestamp in microseconds, properties as JSON. */
const PARQUET_SCHEMA = [
  { name: 'root', num_children: EXPORT_COLUMNS.length },
  text('uuid'),
  text('event'),
  text('distinct_id'),
  { name: 'timestamp', type: 'INT64', repetition_type: 'REQUIRED', converted_type: 'TIMESTAMP_MICROS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } },
  text('person_id', true),
  { ...text('properties'), logical_type: { type: 'JSON' } },
  text('elements_chain'),
] as const

/**
 * Parquet through hyparquet-writer's incremental writer: its buffer is emptied after each row group
 * (the writer keeps counting the file offset), so only one row group is in memory.
 */
async function* encodeParquet(rows: AsyncIterable<EventRow[]>): AsyncGenerator<Uint8Array> {
  const out = new ByteWriter()
  const take = (): Uint8Array => {
    const bytes = new Uint8Array(out.buffer.slice(0, out.index))
    out.index = 0
    return bytes
  }
  const writer = new ParquetWriter({ writer: out, schema: PARQUET_SCHEMA.map((e) => ({ ...e })) as never, createdBy: 'tally' })
  let group: EventRow[] = []
  const writeGroup = () => {
    writer.write({
      rowGroupSize: group.length,
      columnData: [
        { name: 'uuid', data: group.map((r) => r.uuid) },
        { name: 'event', data: group.map((r) => r.event) },
        { name: 'distinct_id', data: group.map((r) => r.distinctId) },
        { name: 'timestamp', data: group.map((r) => r.timestampMicros) },
        { name: 'person_id', data: group.map((r) => r.personId) },
        // The stored JSON text: not parsed and written again (which could also round big numbers).
        { name: 'properties', data: group.map((r) => r.properties) },
        { name: 'elements_chain', data: group.map((r) => r.elementsChain) },
      ],
    })
    group = []
  }
  yield take() // the file's magic number
  for await (const batch of rows) {
    for (const r of batch) group.push(r)
    if (group.length >= ROW_GROUP_ROWS) {
      writeGroup()
      yield take()
    }
  }
  if (group.length > 0) writeGroup()
  writer.finish()
  yield take()
}
