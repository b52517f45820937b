import type { UserSummary } from '../../modules/projects/project-types.ts'

/** SQL expression building PostHog's `created_by` person summary from a users row alias (or NULL). */
export function userSummarySql(alias: string): string {
  return `CASE WHEN ${alias}.id IS NULL THEN NULL ELSE json_build_object('id', ${alias}.id, 'uuid', ${alias}.uuid,
    'distinct_id', ${alias}.distinct_id, 'first_name', ${alias}.first_name, 'last_name', ${alias}.last_name,
    'email', ${alias}.email, 'is_email_verified', ${alias}.is_email_verified) END`
}

export function toUserSummary(value: unknown): UserSummary | null {
  if (!value) return null
  return (typeof value === 'string' ? JSON.parse(value) : value) as UserSummary
}
