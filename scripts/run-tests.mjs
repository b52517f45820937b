#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node's built-in runner through tsx (Node 20's
// `node --test` has no glob support). Extra arguments filter the files by substring.
//
// The files start longest first, by scripts/test-durations.json (test-order.mjs says why). With
// `--durations` the run measures each file (wall and CPU time of its process, scripts/test-file-timer.mjs),
// prints the longest, and writes the measured wall times into test-durations.json: refresh it after a
// full run when files were added or got much slower or faster.
//
// The tests' data dirs (os.tmpdir()) go to a directory of their own on /dev/shm when there is one
// and TMPDIR is not set: every test app creates a PostgreSQL data dir of 1,145 files, and creating a
// file on this machine's disk costs ~0.4 ms (0.8 s a test app) against microseconds on a tmpfs. The
// stores are the same; only a power cut, which no test simulates, would tell the two apart.
//
// Each test process compiles WebAssembly (PGlite) with V8's baseline tier only (test-v8-flags.mjs says why).
//
// dist/ is built first when it is not the build of the current src/ (scripts/build-dist.mjs
// --if-stale: a hash of src/ when it is, as after `npm ci`, whose `prepare` builds it): the tests that
// spawn the `tally` command run dist/main.js (test/helpers/tally-command.ts, which refuses a stale one).
import { spawnSync } from 'node:child_process'
import { accessSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { mergeDurations, orderByDuration } from './test-order.mjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const DURATIONS = path.join(HERE, 'test-durations.json')
const args = process.argv.slice(2)
const record = args.includes('--durations')
const filters = args.filter((a) => !a.startsWith('-'))
const flags = args.filter((a) => a.startsWith('-') && a !== '--durations')
const found = ['src', 'test']
  .flatMap((dir) => readdirSync(dir, { recursive: true }).map((f) => `${dir}/${f}`))
  .filter((f) => f.endsWith('.test.ts') && !f.includes('node_modules'))
  .sort()
const files = found.filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
if (files.length === 0) {
  console.error('no test files matched')
  process.exit(1)
}
const durations = existsSync(DURATIONS) ? JSON.parse(readFileSync(DURATIONS, 'utf8')) : {}

function ramTmpDir() {
  if (process.env.TMPDIR) return null
  try {
    accessSync('/dev/shm', constants.W_OK)
    return mkdtempSync(path.join('/dev/shm', 'tally-tests-'))
  } catch {
    return null
  }
}

const build = spawnSync(process.execPath, [path.join(HERE, 'build-dist.mjs'), '--if-stale'], { stdio: 'inherit' })
if (build.status !== 0) {
  console.error('building dist/ failed: the tests that spawn the tally command need it')
  process.exit(build.status ?? 1)
}

const tmp = ramTmpDir()
// Ctrl-C reaches the test runner too: this process waits for it to end, then removes the directory.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => {})
const times = record ? path.join(tmp ?? os.tmpdir(), `tally-test-times-${process.pid}.jsonl`) : null
const env = { ...process.env, ...(tmp ? { TMPDIR: tmp } : {}), ...(times ? { TALLY_TEST_TIMES: times } : {}) }
const timer = record ? ['--import', path.join(HERE, 'test-file-timer.mjs')] : []
const started = Date.now()
const v8Flags = ['--import', path.join(HERE, 'test-v8-flags.mjs')]
const r = spawnSync(process.execPath, [...v8Flags, '--import', 'tsx', ...timer, '--test', '--test-concurrency=2', ...flags, ...orderByDuration(files, durations)], { stdio: 'inherit', env })
if (times) report(times, (Date.now() - started) / 1000)
if (tmp) rmSync(tmp, { recursive: true, force: true })
process.exit(r.status ?? 1)

/** Prints the longest files of this run and writes their wall times into test-durations.json. */
function report(timesFile, totalSeconds) {
  const rows = existsSync(timesFile) ? readFileSync(timesFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []
  rows.sort((a, b) => b.wallMs - a.wallMs)
  const sum = (k) => rows.reduce((s, x) => s + x[k], 0) / 1000
  console.log(`\n# ${rows.length} files in ${totalSeconds.toFixed(0)} s; their processes: ${sum('wallMs').toFixed(0)} s wall, ${sum('cpuMs').toFixed(0)} s CPU`)
  console.log('#   wall s    CPU s  file')
  for (const x of rows.slice(0, 25)) console.log(`# ${(x.wallMs / 1000).toFixed(1).padStart(8)} ${(x.cpuMs / 1000).toFixed(1).padStart(8)}  ${x.file}`)
  const measured = Object.fromEntries(rows.map((x) => [x.file, x.wallMs / 1000]))
  writeFileSync(DURATIONS, `${JSON.stringify(mergeDurations(durations, measured, found), null, 2)}\n`)
}
