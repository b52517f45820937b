import { distStaleness, DIST_MAIN } from '../../scripts/dist-stamp.mjs'

let checked = false

/**
 * The arguments of `process.execPath` that run the `tally` command: the built dist/main.js, which
 * starts ~2 CPU s cheaper than src/main.ts through tsx. Throws when dist/ is missing or not the build
 * of the current src/ (a test must never run stale code): `npm test` builds it first
 * (scripts/run-tests.mjs); a file run on its own needs `node scripts/build-dist.mjs` after an edit.
 */
export function tallyArgs(...args: string[]): string[] {
  if (!checked) {
    const stale = distStaleness()
    if (stale) throw new Error(`${stale}: run \`node scripts/build-dist.mjs\` (npm test does it) before the tests that spawn the tally command`)
    checked = true
  }
  return [DIST_MAIN, ...args]
}
