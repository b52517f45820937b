import type { Config } from '../config/load-config.ts'
import { createAdapters } from '../app/create-adapters.ts'
import { createServices } from '../app/create-services.ts'
import { createLogger } from '../shared/logger.ts'

/** Opens the metadata store of the data dir (stop the server first: the embedded store is single-process). */
async function withProjects<T>(config: Config, fn: (s: ReturnType<typeof createServices>) => Promise<T>): Promise<T> {
  const stores = await createAdapters(config, { events: false })
  try {
    const services = createServices(stores, createLogger({ level: config.log.level, pretty: false }))
    const b = await services.projects.bootstrap(config.bootstrap)
    if (b.created) console.log(`Initialised ${config.storage.dataDir}; personal API key: ${b.personalApiKey} (shown only now)`)
    return await fn(services)
  } finally {
    await stores.close()
  }
}

/** `tally keys` and `tally keys create-personal`. */
export async function keysCommand(config: Config, args: string[]): Promise<number> {
  if (args[0] === 'create-personal') {
    return withProjects(config, async ({ projects }) => {
      const { key, user } = await projects.createPersonalKey(undefined, args[1] ?? 'cli')
      console.log(`personal API key for ${user.email}: ${key}   (shown only now)`)
      return 0
    })
  }
  if (args.length) {
    console.error(`Unknown keys subcommand "${args[0]}"`)
    return 2
  }
  return withProjects(config, async ({ projects }) => {
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
  return withProjects(config, async ({ projects }) => {
    const { project, apiToken } = await projects.createProject(args.slice(1).join(' '))
    console.log(`project ${project.id} "${project.name}" created; project API key: ${apiToken}`)
    return 0
  })
}
