/** Numbers and durations as the insight views show them. */

export const num = (n: number | undefined | null) => (n == null ? '—' : Number.isInteger(n) ? n.toLocaleString('en-US') : n.toFixed(2))

/** A share as a percentage with one decimal ("42.9%"); 0% when there is nothing to divide by. */
export const percent = (part: number, whole: number) => (whole > 0 ? `${((part / whole) * 100).toFixed(1)}%` : '0%')

/**
 * Seconds in the two largest human units, as PostHog's `humanFriendlyDuration` writes them:
 * "45s", "3m 20s", "2h 5m", "1d 4h"; "—" when there is no time.
 */
export function humanDuration(seconds: number | null | undefined): string {
  if (seconds == null || !Number.isFinite(seconds)) return '—'
  const s = Math.round(seconds)
  if (s < 60) return `${s}s`
  const units: [number, string][] = [[86_400, 'd'], [3600, 'h'], [60, 'm'], [1, 's']]
  const parts: string[] = []
  let rest = s
  for (const [size, name] of units) {
    const n = Math.floor(rest / size)
    if (n > 0 || parts.length > 0) parts.push(`${n}${name}`)
    rest -= n * size
    if (parts.length === 2) break
  }
  return parts.filter((p) => !/^0[a-z]$/.test(p)).join(' ')
}
