import { createContext, useContext } from 'react'
import { useQuery } from '@tanstack/react-query'
import { api, ApiError, personalKey } from './api.ts'
import type { MeJson, ProjectJson } from '../../src/http/wire-types.ts'

/** Membership levels as PostHog numbers them. */
export const LEVEL = { member: 1, admin: 8, owner: 15 } as const

export interface Session {
  /** Null when signed in with a personal API key on a server that has no `/users/@me/` yet. */
  me: MeJson | null
  project: ProjectJson
  /** `/api/projects/<id>` */
  base: string
  /** The user's membership level in this project (PostHog's `effective_membership_level`). */
  level: number
  /** Admins and owners manage keys, members and settings. */
  canManage: boolean
}

async function loadSession(): Promise<Session> {
  let me: MeJson | null = null
  try {
    me = await api<MeJson>('/api/users/@me/')
  } catch (err) {
    // A server without the accounts API still accepts a personal key for everything else.
    if (!(err instanceof ApiError && err.status === 404 && personalKey.get())) throw err
  }
  const project = await api<ProjectJson>(`/api/projects/${me?.team?.id ?? '@current'}/`)
  // The server's answer for this project; the least privilege when it gives none.
  const level = project.effective_membership_level ?? me?.organization?.membership_level ?? LEVEL.member
  return { me, project, base: `/api/projects/${project.id}`, level, canManage: level >= LEVEL.admin }
}

/** The signed-in user and project; an error with status 401 means "not signed in". */
export function useSessionQuery() {
  return useQuery({ queryKey: ['session'], queryFn: loadSession, retry: false, staleTime: 60_000 })
}

export const SessionContext = createContext<Session | null>(null)

/** The session of a page inside the signed-in shell. */
export function useSession(): Session {
  const s = useContext(SessionContext)
  if (!s) throw new Error('useSession outside the signed-in shell')
  return s
}
