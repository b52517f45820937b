/**
 * CSV as PostHog's actions renderer writes it (djangorestframework-csv): nested values flattened into
 * dotted columns (`steps.0.event`, `created_by.email`), the header in first-seen order, booleans as
 * Python prints them, null as an empty cell, CRLF line ends.
 */
function flatten(value: unknown, prefix: string, out: Map<string, unknown>): void {
  if (Array.isArray(value)) value.forEach((v, i) => flatten(v, prefix ? `${prefix}.${i}` : String(i), out))
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out)
  } else out.set(prefix, value)
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return ''
  const s = typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v)
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

/** `emptyHeader` is the header row written when there are no rows to take columns from. */
export function toCsv(rows: Record<string, unknown>[], emptyHeader: string[] = []): string {
  const flat = rows.map((r) => {
    const m = new Map<string, unknown>()
    flatten(r, '', m)
    return m
  })
  const header: string[] = rows.length ? [] : [...emptyHeader]
  for (const m of flat) for (const k of m.keys()) if (!header.includes(k)) header.push(k)
  const lines = [header.map(cell).join(','), ...flat.map((m) => header.map((h) => cell(m.get(h))).join(','))]
  return lines.map((l) => `${l}\r\n`).join('')
}
