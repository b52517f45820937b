import type { Config } from '../config/load-config.ts'
import { createAdapters } from '../app/create-adapters.ts'
import { createServices } from '../app/create-services.ts'
import { createLogger } from '../shared/logger.ts'

/** A one-time set-up link on the server's configured address (loopback when it listens on every interface). */
export function setupLink(config: Config, token: string): string {
  const host = ['0.0.0.0', '::', ''].includes(config.http.host) ? '127.0.0.1' : config.http.host
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.http.port}/setup?token=${token}`
}

/** Opens the metadata store of the data dir (stop the server first: the embedded store is single-process). */
export async function withServices<T>(config: Config, fn: (s: ReturnType<typeof createServices>) => Promise<T>): Promise<T> {
  const stores = await createAdapters(config, { events: false })
  try {
    const services = createServices(stores, createLogger({ level: config.log.level, pretty: false }))
    const b = await services.projects.bootstrap(config.bootstrap)
    if (b.created) {
      console.log(`Initialised ${config.storage.dataDir}; personal API key: ${b.personalApiKey} (shown only now)`)
      const token = await services.auth.createSetupToken(b.user?.id)
      console.log(`set up the owner's sign-in (once, within 24 h): ${setupLink(config, token)}`)
    }
    return await fn(services)
  } finally {
    await stores.close()
  }
}

/** `tally keys` and `tally keys create-personal`. */
export async function keysCommand(config: Config, args: string[]): Promise<number> {
  if (args[0] === 'create-personal') {
    return withServices(config, async ({ projects }) => {
      const { key, user } = await projects.createPersonalKey(undefined, args[1] ?? 'cli')
      console.log(`personal API key for ${user.email}: ${key}   (shown only now)`)
      return 0
    })
  }
  if (args.length) {
    console.error(`Unknown keys subcommand "${args[0]}"`)
    return 2
  }
  return withServices(config, async ({ projects }) => {
    for (const p of await projects.listProjects()) console.log(`${p.id}\t${p.apiToken}\t${p.name}`)
    return 0
  })
}

/** `tally projects create NAME`. */
export async function projectsCommand(config: Config, args: string[]): Promise<number> {
  if (args[0] !== 'create' || !args[1]) {
    console.error('Usage: tally projects create NAME')
    return 2
  }
  return withServices(config, async ({ projects }) => {
    const { project, apiToken } = await projects.createProject(args.slice(1).join(' '))
    console.log(`project ${project.id} "${project.name}" created; project API key: ${apiToken}`)
    return 0
  })
}
