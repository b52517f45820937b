// Preloaded (`--import`) by scripts/run-tests.mjs --durations into the runner and so into every test
// file's process: when a test file's process exits it appends a line to $TALLY_TEST_TIMES with the
// file, its wall time since the process started, and the CPU time of the process (all its threads:
// PGlite, DuckDB, decode workers; not its child processes such as Chromium or a server it spawned).
import { appendFileSync } from 'node:fs'
import path from 'node:path'

const file = process.argv[1] ?? ''
const out = process.env.TALLY_TEST_TIMES
// The runner's own process has --test; processes the tests spawn run other files.
if (out && /\.test\.ts$/.test(file) && !process.execArgv.includes('--test')) {
  process.on('exit', (code) => {
    const cpu = process.cpuUsage()
    const line = { file: path.relative(process.cwd(), file), code, wallMs: Math.round(performance.now()), cpuMs: Math.round((cpu.user + cpu.system) / 1000) }
    appendFileSync(out, `${JSON.stringify(line)}\n`)
  })
}
