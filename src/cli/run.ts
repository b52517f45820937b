import { parseArgs } from 'node:util'
import { loadConfig, type ConfigFlags } from '../config/load-config.ts'
import { createLogger } from '../shared/logger.ts'
import { serve } from './serve.ts'
import { keysCommand, projectsCommand } from './admin-commands.ts'
import { dlqCommand } from './dlq-command.ts'
import { usersCommand } from './users-command.ts'
import { exportEventsCommand } from './export-events-command.ts'
import { exportCommand, importCommand } from '../app/move-data.ts'

const USAGE = `Usage: tally <command> [options]

Commands:
  serve [--role R]          start the server (default); R: all (default), capture, api, worker or a
                            comma list (TALLY_ROLE); other than all needs TALLY_DATABASE_URL + TALLY_NATS_URL
  keys                      print every project's API key
  keys create-personal      add a personal API key for the owner and print it
  projects create NAME      add a project with its own project API key
  users create --email E [--password P] [--first-name N] [--role owner|admin|member]
                            add a user who signs in to the web app (no password: prints a set-password link)
  users setup-link --email E                a new one-time set-password link for a user
  dlq list [--project N] [--pending]       events the pipeline could not process
  dlq replay [--id N ...] [--project N]    put pending dead letters back on the queue
  export-events --project N --format parquet|csv|ndjson --out FILE [--from DATE] [--to DATE]
                            a project's events (from <= timestamp < to) into a file
  export --out DIR          everything (metadata, persons, events) of the configured stores into DIR
  import --from DIR         an export into fresh stores (embedded data dir, or PostgreSQL + ClickHouse)

Options (each also from an environment variable):
  --port N        TALLY_PORT       (default 8000)
  --host ADDR     TALLY_HOST       (default 127.0.0.1; 0.0.0.0 to listen publicly)
  --data-dir DIR  TALLY_DATA_DIR   (default ./.tally)`

/** Entry point of the `tally` CLI. Returns the process exit code (serve resolves only on shutdown). */
export async function run(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      id: { type: 'string', multiple: true },
      project: { type: 'string' },
      pending: { type: 'boolean' },
      email: { type: 'string' },
      password: { type: 'string' },
      'first-name': { type: 'string' },
      role: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      format: { type: 'string' },
      out: { type: 'string' },
    },
  })
  if (values.help) {
    console.log(USAGE)
    return 0
  }
  const [command = 'serve', ...rest] = positionals
  // --role is the process role for `serve`, a user's role for `users create`.
  const flags: ConfigFlags = { port: values.port, host: values.host, dataDir: values['data-dir'], role: command === 'serve' ? values.role : 'all' }
  const config = loadConfig(flags, env)
  switch (command) {
    case 'serve':
      return serve(config, createLogger({ level: config.log.level, pretty: config.log.format === 'pretty' || (config.log.format === null && process.stdout.isTTY === true) }))
    case 'keys':
      return keysCommand(config, rest)
    case 'projects':
      return projectsCommand(config, rest)
    case 'users':
      return usersCommand(config, rest, { email: values.email, password: values.password, firstName: values['first-name'], role: values.role })
    case 'dlq': {
      const ids = (values.id ?? []).map(Number)
      const projectId = values.project === undefined ? undefined : Number(values.project)
      if (ids.some((n) => !Number.isSafeInteger(n)) || (projectId !== undefined && !Number.isSafeInteger(projectId))) {
        console.error('--id and --project take whole numbers')
        return 2
      }
      return dlqCommand(config, rest, { ids, projectId, pendingOnly: values.pending === true })
    }
    case 'export':
      return exportCommand(config, { out: values.out })
    case 'import':
      return importCommand(config, { from: values.from })
    case 'export-events':
      return exportEventsCommand(config, { project: values.project, from: values.from, to: values.to, format: values.format, out: values.out })
    default:
      console.error(`Unknown command "${command}".\n\n${USAGE}`)
      return 2
  }
}
