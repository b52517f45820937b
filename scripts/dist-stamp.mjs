// Whether dist/ holds the current build of src/. Tests that start the `tally` command spawn the built
// dist/main.js (plain node) rather than src/main.ts through tsx, whose transform costs ~2 CPU s a
// process (measured: `tally dlq list` 6.2-6.7 s CPU through tsx, 4.2-4.6 s built); they must never run
// stale code, so the build writes a stamp and they check it.
//
// The stamp (dist/.source-stamp) is a hash of what the build compiled (every file of src/ but the
// tests, and the two tsconfigs, read before tsc starts) and of the tsbuildinfo tsc wrote. dist/ is
// current when both still match: an edit of src/ changes the first, a plain `tsc -p
// tsconfig.build.json` run after the stamp changes the second (it rewrites the tsbuildinfo whenever it
// emits). Content hashes, not modification times: a checkout that rewrites unchanged files leaves
// dist/ current, and tsc's incremental build does not touch the outputs of unchanged files.
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const DIST_MAIN = path.join(ROOT, 'dist', 'main.js')
const STAMP = path.join(ROOT, 'dist', '.source-stamp')
const BUILD_INFO = path.join(ROOT, 'dist', '.tsbuildinfo')

/** A hash of the build's inputs: src/ without its *.test.ts files, and the tsconfigs. */
export function sourceHash() {
  const h = createHash('sha256')
  const files = readdirSync(path.join(ROOT, 'src'), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && !d.name.endsWith('.test.ts'))
    .map((d) => path.relative(ROOT, path.join(d.parentPath ?? d.path, d.name)))
    .sort()
  for (const f of [...files, 'tsconfig.json', 'tsconfig.build.json']) h.update(f).update('\0').update(readFileSync(path.join(ROOT, f))).update('\0')
  return h.digest('hex')
}

function buildInfoHash() {
  return existsSync(BUILD_INFO) ? createHash('sha256').update(readFileSync(BUILD_INFO)).digest('hex') : 'none'
}

/** Records that dist/ was built from sources of hash `hash` (taken before the build started). */
export function writeStamp(hash) {
  writeFileSync(STAMP, `${hash} ${buildInfoHash()}\n`)
}

/** Null when dist/ is the build of the current src/; otherwise why not. */
export function distStaleness() {
  if (!existsSync(DIST_MAIN)) return 'dist/main.js is missing'
  if (!existsSync(STAMP)) return 'dist/ has no build stamp (it was not built by scripts/build-dist.mjs)'
  const [src, info] = readFileSync(STAMP, 'utf8').trim().split(' ')
  if (src !== sourceHash()) return 'src/ changed since dist/ was built'
  if (info !== buildInfoHash()) return 'dist/ was rebuilt without scripts/build-dist.mjs'
  return null
}
