/**
 * What the date and version filters (`date-filter-sql.ts`, `semver-filter-sql.ts`) need of a SQL
 * dialect, so DuckDB (events) and PostgreSQL/PGlite (persons) run one copy of their parsing rules.
 * Patterns handed to it are our constants, written to mean the same in RE2 and PostgreSQL's ARE
 * (anchored, ASCII classes, no backslashes); user values only ever go through `bind`.
 */
export interface ValueSqlDialect {
  /** Binds a number (as a double) or a string (as text) and returns its placeholder. */
  bind(value: number | string): string
  /** True when `text` matches `pattern` (searched: patterns carry their own `^`/`$`). */
  matches(text: string, pattern: string): string
  /** `body` over the value of `expr`, which is evaluated once per row. */
  let(expr: string, body: (value: string) => string): string
  /** `body` over the capture groups of `pattern` in `text` (which matches it); an absent group reads `''`. */
  groups(text: string, pattern: string, names: readonly string[], body: (group: (name: string) => string) => string): string
  /**
   * A text the caller has checked to be a decimal number (Rust's f64 grammar, or plain digits) as a
   * double, infinity and NaN included; NULL where the dialect cannot read it (PostgreSQL: past its
   * bounded grammar, the existing numeric operators' limit).
   */
  toDouble(text: string): string
  /** True for a finite double (NULL stays NULL). */
  isFinite(value: string): string
  /** `text` without the characters of `chars` (a constant) at both ends. */
  trim(text: string, chars: string): string
  /** `text` without the characters of `chars` (a constant) at its start (`ltrim`; ClickHouse 18.16 has none). */
  trimStart(text: string, chars: string): string
  /** `text` (never longer than `width`) padded at its start with `char` (a constant) to `width` characters (`lpad`). */
  padStart(text: string, width: number, char: string): string
  /** The `.`-separated parts of `text` (not empty), each mapped by `part`, concatenated in order. */
  mapParts(text: string, part: (value: string) => string): string
  /** Compares two texts byte by byte (code point order), whatever the database's collation. */
  compareBytes(left: string, op: '=' | '<>' | '<' | '<=' | '>' | '>=', right: string): string
}

/** A constant of ours (never user text) as a SQL string literal; both dialects read it alike. */
export function constantLiteral(text: string): string {
  if (text.includes('\\')) throw new Error('constant SQL literals are written without backslashes')
  return `'${text.replace(/'/g, "''")}'`
}

/** `floor(a / b)` on doubles: the same integer division in both dialects (DuckDB's `/` is never integer). */
export function floorDiv(a: string, b: number): string {
  return `floor((${a}) / ${b}.0)`
}
