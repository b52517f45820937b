import type { Config } from '../config/load-config.ts'
import { LEVEL, type MembershipLevel } from '../modules/auth/auth-types.ts'
import { setupLink, withServices } from './admin-commands.ts'

const ROLES: Record<string, MembershipLevel> = { owner: LEVEL.owner, admin: LEVEL.admin, member: LEVEL.member }

export const USERS_USAGE = 'Usage: tally users create --email E [--password P] [--first-name N] [--role owner|admin|member]'

/**
 * `tally users create`: adds a user to the organization with a role; without `--password`, prints a
 * one-time link (24 h) where they choose one. `tally users setup-link --email E` prints a new link for
 * an existing user (a lost first-start link, a forgotten password).
 */
export async function usersCommand(
  config: Config,
  args: string[],
  opts: { email?: string; password?: string; firstName?: string; role?: string },
): Promise<number> {
  const level = ROLES[opts.role ?? 'member']
  if ((args[0] !== 'create' && args[0] !== 'setup-link') || !opts.email || level === undefined) {
    console.error(USERS_USAGE)
    return 2
  }
  const email = opts.email
  return withServices(config, async ({ auth }) => {
    if (args[0] === 'setup-link') {
      const token = await auth.createSetupTokenFor(email)
      console.log(`set-password link for ${email} (once, within 24 h): ${setupLink(config, token)}`)
      return 0
    }
    const { user, setupToken } = await auth.createAccount({ email, firstName: opts.firstName ?? '', password: opts.password ?? null, level })
    console.log(`user ${user.email} created (${opts.role ?? 'member'})`)
    if (setupToken) console.log(`set-password link (once, within 24 h): ${setupLink(config, setupToken)}`)
    return 0
  }).catch((err: Error & { attr?: string }) => {
    console.error(`${err.attr ? `${err.attr}: ` : ''}${err.message}`)
    return 1
  })
}
