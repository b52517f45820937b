/**
 * Event properties kept in columns of their own beside the `properties` JSON (PostHog's `mat_*`
 * columns): the keys that breakdowns, filters and action url steps read most. A column holds the
 * value only when it is a JSON string; otherwise (absent, null, a number, an object) it is NULL and
 * readers fall back to parsing `properties`, so a row written without the columns (older rows, data
 * loaded by hand) reads the same, only slower.
 *
 * Migration `0005-materialized-properties.sql` adds the columns and fills existing rows with the
 * same expression as `materializedValuesSql`.
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
])

export const MATERIALIZED_COLUMNS: readonly string[] = [...MATERIALIZED_PROPERTIES.values()]

/** The JSON pointer of a top-level key (as `json_extract_string` takes it). */
export function jsonPointer(key: string): string {
  return `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`
}

/** SQL: the JSON values of every materialized key of the JSON text `properties`, parsed once (a list). */
export function materializedExtractSql(properties: string): string {
  const pointers = [...MATERIALIZED_PROPERTIES.keys()].map((k) => `'${jsonPointer(k).replace(/'/g, "''")}'`)
  return `json_extract(${properties}, [${pointers.join(', ')}])`
}

/** SQL: each materialized column's value (in `MATERIALIZED_COLUMNS` order) from `materializedExtractSql`'s list. */
export function materializedValuesSql(list: string): string[] {
  return MATERIALIZED_COLUMNS.map((_, i) => `(CASE WHEN json_type(${list}[${i + 1}]) = 'VARCHAR' THEN json_extract_string(${list}[${i + 1}], '$') END)`)
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
