import { parsePropertyDate, parseRustFloat } from '../../src/domain/properties/property-date.ts'

// The shapes property-date.ts parses itself, before it falls back to JS's Date.parse.
const OWN_SHAPES = [/^-?\d+[hdwmy]$/, /^\d{4}-\d{2}-\d{2}$/, /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(\.\d+)?)?$/,
  /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/]

/**
 * True when the domain reads `v` as a date only through JS's Date.parse (V8's legacy parser: "1.2.3"
 * is 2003-01-02, " 5" is 2001-05-01): the SQL's documented gap (storage/sql/date-filter-sql.ts),
 * where it reads no date.
 */
export function isDateOnlyToDateParse(v: unknown, now: number): boolean {
  if (typeof v !== 'string' || parseRustFloat(v) !== undefined || OWN_SHAPES.some((re) => re.test(v))) return false
  return !Number.isNaN(parsePropertyDate(v, now))
}
