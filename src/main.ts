import { run } from './cli/run.ts'

run(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err)
    process.exit(1)
  },
)
