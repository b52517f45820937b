// The order in which scripts/run-tests.mjs hands the test files to Node's runner, which starts them in
// that order, `--test-concurrency` at a time. Sorted by name, the heaviest files (the browser suites,
// test/e2e/web-*) came last and one slot ran them alone while the other sat idle; longest first
// (the LPT rule) lets the slots finish within about one short file of each other.
import path from 'node:path'

/**
 * `files` longest first by `durations` (seconds per file, from an earlier run: test-durations.json).
 * A file with no recorded duration (new, or renamed) is estimated as the median of the recorded files
 * of its directory, else of all recorded files, else 0; equal estimates keep name order.
 * @param {readonly string[]} files
 * @param {Readonly<Record<string, number>>} durations
 * @returns {string[]}
 */
export function orderByDuration(files, durations) {
  const known = Object.entries(durations).filter(([, s]) => Number.isFinite(s))
  const byDir = new Map()
  for (const [f, s] of known) byDir.set(path.dirname(f), [...(byDir.get(path.dirname(f)) ?? []), s])
  const overall = median(known.map(([, s]) => s))
  const estimate = (f) => (Number.isFinite(durations[f]) ? durations[f] : median(byDir.get(path.dirname(f)) ?? []) ?? overall ?? 0)
  return files
    .map((f) => ({ f, s: estimate(f) }))
    .sort((a, b) => b.s - a.s || (a.f < b.f ? -1 : a.f > b.f ? 1 : 0))
    .map(({ f }) => f)
}

/** The middle value (the mean of the two middle ones for an even count), or null for none. */
function median(values) {
  if (values.length === 0) return null
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

/**
 * The recorded durations with this run's measurements in place of the old ones, without files that no
 * longer exist (`existing`), keys sorted so the file diffs line by line.
 * @param {Readonly<Record<string, number>>} old
 * @param {Readonly<Record<string, number>>} measured
 * @param {readonly string[]} existing
 * @returns {Record<string, number>}
 */
export function mergeDurations(old, measured, existing) {
  const keep = new Set(existing)
  const all = { ...old, ...measured }
  return Object.fromEntries(Object.keys(all).filter((f) => keep.has(f)).sort().map((f) => [f, Math.round(all[f] * 10) / 10]))
}
