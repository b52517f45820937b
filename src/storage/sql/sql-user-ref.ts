import type { User } from '../../modules/projects/project-types.ts'

/** Columns of the user `alias` (joined as the record's creator), prefixed so they sit beside the record's own. */
export function userRefColumns(alias: string, prefix = 'cb_'): string {
  return ['id', 'uuid', 'distinct_id', 'first_name', 'last_name', 'email', 'is_email_verified', 'organization_id', 'current_project_id']
    .map((c) => `${alias}.${c} AS ${prefix}${c}`)
    .join(', ')
}

/** The creator read back from `userRefColumns`, or null when the record has none. */
export function toUserRef(r: Record<string, any>, prefix = 'cb_'): User | null {
  if (r[`${prefix}id`] === null || r[`${prefix}id`] === undefined) return null
  return {
    id: r[`${prefix}id`],
    uuid: r[`${prefix}uuid`],
    distinctId: r[`${prefix}distinct_id`],
    firstName: r[`${prefix}first_name`],
    lastName: r[`${prefix}last_name`],
    email: r[`${prefix}email`],
    isEmailVerified: r[`${prefix}is_email_verified`],
    organizationId: r[`${prefix}organization_id`],
    currentProjectId: r[`${prefix}current_project_id`],
  }
}
