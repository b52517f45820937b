import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'

// The import rules of STYLE.md, checked on the source text (what ESLint's no-restricted-imports
// would do): the domain is pure, only storage/ talks to database drivers, and only the composition
// root (src/app) knows which adapter runs.
const SRC = path.resolve(import.meta.dirname, '../src')
const files = readdirSync(SRC, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
const importsOf = (file: string) =>
  [...readFileSync(path.join(SRC, file), 'utf8').matchAll(/^(?:import|export)[^'"]*from\s+'([^']+)'/gm)].map((m) => m[1]!)
const resolved = (file: string, spec: string) => (spec.startsWith('.') ? path.relative(SRC, path.resolve(SRC, path.dirname(file), spec)) : spec)

test('domain code imports only the domain, shared/, pure node built-ins and the regex engine', () => {
  // re2js: a pure regex engine (no I/O), the linear-time matcher for users' patterns.
  const allowed = new Set(['node:crypto', 'node:zlib', 're2js'])
  for (const file of files.filter((f) => f.startsWith('domain/'))) {
    for (const spec of importsOf(file)) {
      const target = resolved(file, spec)
      const ok = target.startsWith('domain/') || target.startsWith('shared/') || allowed.has(target)
      assert.ok(ok, `${file} imports ${spec}`)
    }
  }
})

test('only storage/ imports a database driver', () => {
  const drivers = new Set(['@electric-sql/pglite', '@duckdb/node-api', 'pg'])
  for (const file of files.filter((f) => !f.startsWith('storage/'))) {
    for (const spec of importsOf(file)) assert.ok(!drivers.has(spec), `${file} imports ${spec}`)
  }
})

test('only the composition root imports adapters (ports are fine)', () => {
  const isAdapter = (target: string) => target.startsWith('storage/') || (target.startsWith('queue/') && target !== 'queue/event-queue.ts')
  for (const file of files.filter((f) => !/^(app|storage|queue)\//.test(f))) {
    for (const spec of importsOf(file)) assert.ok(!isAdapter(resolved(file, spec)), `${file} imports ${spec}`)
  }
})

test('the rules above had files to check', () => {
  for (const folder of ['domain/', 'storage/', 'modules/', 'http/', 'app/', 'ingestion/', 'queue/']) {
    assert.ok(files.some((f) => f.startsWith(folder)), `no file under src/${folder}`)
  }
})

test('only routes, their schemas and the composition root import http/: stores, services, steps and adapters do not', () => {
  const mayImportHttp = (f: string) => f.startsWith('http/') || f.startsWith('app/') || f.endsWith('-routes.ts') || f.endsWith('-schemas.ts')
  for (const file of files.filter((f) => !mayImportHttp(f))) {
    for (const spec of importsOf(file)) assert.ok(!resolved(file, spec).startsWith('http/'), `${file} imports ${spec}`)
  }
})

test('http/ does not import the composition root', () => {
  for (const file of files.filter((f) => f.startsWith('http/'))) {
    for (const spec of importsOf(file)) assert.ok(!resolved(file, spec).startsWith('app/'), `${file} imports ${spec}`)
  }
})

test('no import cycle between feature folders (modules/<feature>, ingestion)', () => {
  const isFeature = (folder: string) => folder.startsWith('modules/') || folder === 'ingestion'
  const folderOf = (f: string) => (f.startsWith('modules/') ? f.split('/').slice(0, 2).join('/') : f.split('/')[0]!)
  const edges = new Map<string, Set<string>>()
  for (const file of files) {
    for (const spec of importsOf(file)) {
      if (!spec.startsWith('.')) continue
      const from = folderOf(file)
      const to = folderOf(resolved(file, spec))
      if (from !== to && isFeature(from) && isFeature(to)) edges.set(from, (edges.get(from) ?? new Set()).add(to))
    }
  }
  assert.ok(edges.size >= 3, 'found the folder graph')
  const state = new Map<string, 'open' | 'done'>()
  const visit = (node: string, path: string[]) => {
    if (state.get(node) === 'done') return
    assert.notEqual(state.get(node), 'open', `import cycle: ${[...path, node].join(' -> ')}`)
    state.set(node, 'open')
    for (const next of edges.get(node) ?? []) visit(next, [...path, node])
    state.set(node, 'done')
  }
  for (const node of edges.keys()) visit(node, [])
})

test('the event-SQL layer is engine-neutral: storage/event-sql imports no engine folder and no driver', () => {
  const engines = (target: string) => /^storage\/(duckdb|clickhouse|pglite|postgres)\//.test(target) || ['@duckdb/node-api', '@clickhouse/client', 'pg', '@electric-sql/pglite'].includes(target)
  const layer = files.filter((f) => f.startsWith('storage/event-sql/'))
  assert.ok(layer.length >= 5, 'found the layer')
  for (const file of layer) {
    for (const spec of importsOf(file)) assert.ok(!engines(resolved(file, spec)), `${file} imports ${spec}`)
  }
})
