#!/usr/bin/env node
// The `tally` command: runs src/main.ts through tsx (TypeScript without a build step).
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const tsx = createRequire(import.meta.url).resolve('tsx')
const r = spawnSync(process.execPath, ['--import', tsx, path.join(root, 'src/main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' })
process.exit(r.status ?? 1)
