#!/usr/bin/env node
// Builds the web app into dist/web/ with Vite, then writes a .br and a .gz next to each JS/CSS
// file (served pre-compressed by src/modules/web-app/). `--if-stale` builds only when
// dist/web/index.html is absent or older than a file of web/ (what `npm start` and the browser
// tests use). Exits non-zero when the build fails.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, gzipSync, constants } from 'node:zlib'
import { build } from 'vite'

const root = fileURLToPath(new URL('..', import.meta.url))
/** The newest modification time among web/'s files (node_modules aside) and the operator table the editors import. */
function newestSource() {
  return readdirSync(`${root}web`, { recursive: true })
    .filter((f) => !String(f).includes('node_modules'))
    .reduce((max, f) => Math.max(max, statSync(`${root}web/${f}`).mtimeMs), statSync(`${root}src/domain/properties/property-operators.ts`).mtimeMs)
}
const index = `${root}dist/web/index.html`
if (process.argv.includes('--if-stale') && existsSync(index) && statSync(index).mtimeMs >= newestSource()) process.exit(0)
await build({ configFile: `${root}web/vite.config.ts`, logLevel: process.argv.includes('--quiet') ? 'warn' : 'info' })

const assets = `${root}dist/web/assets`
for (const name of readdirSync(assets).filter((f) => /\.(js|css|svg)$/.test(f))) {
  const body = readFileSync(`${assets}/${name}`)
  writeFileSync(`${assets}/${name}.gz`, gzipSync(body, { level: 9 }))
  writeFileSync(`${assets}/${name}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }))
}
