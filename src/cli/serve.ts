import { setFlagsFromString } from 'node:v8'
import type { Logger } from 'pino'
import type { Config } from '../config/load-config.ts'
import { createApp } from '../app/create-app.ts'
import { setupLink } from './admin-commands.ts'
import { installCrashPoints, parseCrashAt } from '../shared/crash-points.ts'

/** `tally serve`: starts everything, prints first-start keys, stops cleanly on SIGINT/SIGTERM. */
export async function serve(config: Config, logger: Logger): Promise<number> {
  // Under ingestion load V8 let the old generation grow to several times what survives a full
  // collection (heap used 700-1,070 MB against 135 MB live), most of the peak RSS. Growing it by
  // at most half of what survives kept the peak RSS at 836-982 MB instead of 1,035-1,685 MB, CPU per
  // 1,000 events within the runs' spread (a 15 s /batch/ load, two runs or more each). A growth factor, not a cap:
  // a heap that needs more still gets it. V8 reads it at every collection, so it applies from here on.
  setFlagsFromString('--heap-growing-percent=50')
  // Test-only (the kill -9 matrix): arms a crash point before anything opens the stores.
  const crashAt = config.testing.crashAt ? parseCrashAt(config.testing.crashAt) : null
  if (crashAt || config.testing.unsafeAckBeforeFsync) {
    installCrashPoints({ crashAt, unsafeAckBeforeWrite: config.testing.unsafeAckBeforeFsync })
    logger.warn({ crashAt: config.testing.crashAt, unsafeAckBeforeFsync: config.testing.unsafeAckBeforeFsync }, 'test-only crash settings are on')
  }
  const app = await createApp(config, logger)
  const b = app.bootstrap
  if (b.created) {
    // Printed once: the personal key is stored only as a hash.
    process.stdout.write(
      `\nTally initialised ${config.storage.dataDir}\n` +
        `  project API key:  ${b.projectApiKey}   (project "${b.project?.name}", id ${b.project?.id})\n` +
        `  personal API key: ${b.personalApiKey}   (shown only now; \`tally keys create-personal\` makes another)\n\n`,
    )
  }
  // Fastify logs the one "ready" line itself, with the address it actually bound (port 0 included).
  await app.http.listen({
    host: config.http.host,
    port: config.http.port,
    listenTextResolver: (address) => `Tally ready on ${address} (data dir ${config.storage.dataDir})`,
  })
  if (b.created) {
    // Single use, 24 h, stored hashed: where the owner chooses an e-mail and password for the web app.
    const token = await app.services.auth.createSetupToken(b.user?.id)
    const address = app.http.server.address()
    const port = typeof address === 'object' && address !== null ? address.port : config.http.port
    process.stdout.write(`  set up the owner's sign-in (once, within 24 h): ${setupLink({ ...config, http: { ...config.http, port } }, token)}\n\n`)
  }

  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down')
      app.close().then(
        () => resolve(0),
        (err) => {
          logger.error({ err }, 'unclean shutdown')
          resolve(1)
        },
      )
    }
    process.once('SIGINT', () => stop('SIGINT'))
    process.once('SIGTERM', () => stop('SIGTERM'))
  })
}
