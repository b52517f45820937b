/**
 * Event properties kept in columns of their own beside the `properties` JSON (PostHog's `mat_*`
 * columns): the keys that breakdowns, filters and action url steps read most. A column holds
 * exactly what `json_extract_string(properties, <key>)` gives (text of a string, number, boolean,
 * object or array; NULL when absent or JSON null), so readers never parse `properties` for these
 * keys; `mat_nonstring` has bit i set when key i holds something other than a string (url steps
 * match strings only).
 *
 * The event store fills the columns on insert and migrations 0005/0006 filled the rows before them.
 * A loader that inserts rows straight into the table must run `fillMaterializedSql` afterwards:
 * unfilled rows read as if the keys were absent.
 */
export const MATERIALIZED_PROPERTIES: ReadonlyMap<string, string> = new Map([
  ['$current_url', 'mat_current_url'],
  ['$pathname', 'mat_pathname'],
  ['$host', 'mat_host'],
  ['$browser', 'mat_browser'],
  ['$os', 'mat_os'],
  ['$device_type', 'mat_device_type'],
  ['$referring_domain', 'mat_referring_domain'],
  ['$lib', 'mat_lib'],
  // Past the eighth key: no mat_nonstring bit (the column is read as text only, never by url steps).
  ['$session_id', 'mat_session_id'],
])

/** mat_nonstring is a UTINYINT: one bit for each of the first eight keys. */
export const NONSTRING_KEYS = 8
const nonStringIndex = (key: string): number => {
  const at = [...MATERIALIZED_PROPERTIES.keys()].indexOf(key)
  return at >= 0 && at < NONSTRING_KEYS ? at : -1
}

/** The columns the writer fills, in `materializedValuesSql`'s order: each key's, then `mat_nonstring`. */
export const MATERIALIZED_COLUMNS: readonly string[] = [...MATERIALIZED_PROPERTIES.values(), 'mat_nonstring']

/** The JSON pointer of a top-level key (as `json_extract_string` takes it). */
export function jsonPointer(key: string): string {
  return `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`
}

/**
 * SQL: every materialized key of the JSON text `properties` as a struct of two lists, `v` the text
 * (`json_extract_string`) and `t` the JSON type of each. Two passes over the text, but neither builds
 * JSON values: taking the values as JSON (`json_extract`, one pass) made an insert of 1,000 events
 * of 2 KB need ~90 MB of DuckDB's memory, this ~60 MB (probe under decreasing memory limits).
 */
export function materializedExtractSql(properties: string): string {
  const pointers = `[${[...MATERIALIZED_PROPERTIES.keys()].map((k) => `'${jsonPointer(k).replace(/'/g, "''")}'`).join(', ')}]`
  return `{'v': json_extract_string(${properties}, ${pointers}), 't': json_type(${properties}, ${pointers})}`
}

/**
 * SQL: each of `MATERIALIZED_COLUMNS`' values from `materializedExtractSql`'s struct. The bits of
 * `mat_nonstring` come from one lambda over the types rather than a CASE per key: DuckDB sets up
 * every expression of a statement whatever its row count, and the eight CASEs made a one-event
 * insert cost ~2.9 ms of CPU against ~1.1 (tmp probe, one row through read_csv).
 */
export function materializedValuesSql(m: string): string[] {
  const keys = [...MATERIALIZED_PROPERTIES.keys()]
  const nonString = `list_sum(list_transform(${m}.t, lambda t, i: CASE WHEN i <= ${NONSTRING_KEYS} AND t NOT IN ('VARCHAR', 'NULL') THEN 1 << (i - 1) ELSE 0 END))`
  return [...keys.map((_, i) => `${m}.v[${i + 1}]`), `CAST(${nonString} AS UTINYINT)`]
}

/** SQL: the materialized value of `key` when it is a JSON string, else NULL (`alias.` prefixed when given). */
export function materializedStringSql(key: string, alias?: string): string | undefined {
  const column = materializedColumn(key, alias)
  if (!column || nonStringIndex(key) < 0) return undefined
  const bit = 2 ** nonStringIndex(key)
  return `(CASE WHEN (${alias ? `${alias}.` : ''}mat_nonstring & ${bit}) = 0 THEN ${column} END)`
}

/** The mat_nonstring bit of a key (0-7), or -1 for a key without one. */
export function nonStringBit(key: string): number {
  return nonStringIndex(key)
}

/** The column of `key` on the events table (with `alias.` when given), or undefined when not materialized. */
export function materializedColumn(key: string, alias?: string): string | undefined {
  const column = MATERIALIZED_PROPERTIES.get(key)
  return column && (alias ? `${alias}.${column}` : column)
}

/**
 * Fills the materialized columns of rows written without them (`WHERE` optional SQL): what a
 * loader that inserts events straight into the table runs afterwards, as the migration did for old rows.
 */
export function fillMaterializedSql(where?: string): string {
  const values = materializedValuesSql('m')
  return `UPDATE events SET ${MATERIALIZED_COLUMNS.map((c, i) => `${c} = ${values[i]}`).join(', ')}
    FROM (SELECT uuid AS m_uuid, ${materializedExtractSql('properties')} AS m FROM events${where ? ` WHERE ${where}` : ''}) AS s
    WHERE events.uuid = s.m_uuid`
}
