#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node's built-in runner through tsx (Node 20's
// `node --test` has no glob support). Extra arguments filter the files by substring.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'

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
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...flags, ...files], { stdio: 'inherit' })
process.exit(r.status ?? 1)
