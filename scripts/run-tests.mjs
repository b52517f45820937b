#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node's built-in runner through tsx (Node 20's
// `node --test` has no glob support). Extra arguments filter the files by substring.
//
// The tests' data dirs (os.tmpdir()) go to a directory of their own on /dev/shm when there is one
// and TMPDIR is not set: every test app creates a PostgreSQL data dir of 1,145 files, and creating a
// file on this machine's disk costs ~0.4 ms (0.8 s a test app) against microseconds on a tmpfs. The
// stores are the same; only a power cut, which no test simulates, would tell the two apart.
import { spawnSync } from 'node:child_process'
import { accessSync, constants, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import path from 'node:path'

const filters = process.argv.slice(2).filter((a) => !a.startsWith('-'))
const flags = process.argv.slice(2).filter((a) => a.startsWith('-'))
const files = ['src', 'test']
  .flatMap((dir) => readdirSync(dir, { recursive: true }).map((f) => `${dir}/${f}`))
  .filter((f) => f.endsWith('.test.ts') && !f.includes('node_modules'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort()
if (files.length === 0) {
  console.error('no test files matched')
  process.exit(1)
}

function ramTmpDir() {
  if (process.env.TMPDIR) return null
  try {
    accessSync('/dev/shm', constants.W_OK)
    return mkdtempSync(path.join('/dev/shm', 'tally-tests-'))
  } catch {
    return null
  }
}

const tmp = ramTmpDir()
// Ctrl-C reaches the test runner too: this process waits for it to end, then removes the directory.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => {})
const env = tmp ? { ...process.env, TMPDIR: tmp } : process.env
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...flags, ...files], { stdio: 'inherit', env })
if (tmp) rmSync(tmp, { recursive: true, force: true })
process.exit(r.status ?? 1)
