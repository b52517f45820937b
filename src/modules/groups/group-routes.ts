import type { FastifyInstance, FastifyRequest } from 'fastify'
import { addRoute } from '../../http/route-paths.ts'
import { validationError } from '../../shared/errors.ts'
import type { GroupService } from './group-service.ts'
import type { Group, GroupCursor } from './group-types.ts'

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1000
const MAX_TEXT = 1000

type Query = Record<string, unknown>

/** A group as PostHog's GroupSerializer shows it. */
export function toGroupJson(g: Group) {
  return { group_type_index: g.typeIndex, group_key: g.key, group_properties: g.properties, created_at: g.createdAt.toISOString() }
}

function text(q: Query, name: string): string | undefined {
  const v = q[name]
  if (v === undefined) return undefined
  if (typeof v !== 'string') throw validationError(name, `${name} must be given once.`)
  if (v.length > MAX_TEXT) throw validationError(name, `${name} must be at most ${MAX_TEXT} characters.`, 'max_length')
  return v
}

/** `group_type_index`, required (PostHog: "This query parameter is required."), 0 to 4. */
function readTypeIndex(q: Query): number {
  const v = text(q, 'group_type_index')
  if (v === undefined || v === '') throw validationError('group_type_index', 'This query parameter is required.', 'required')
  if (!/^[0-4]$/.test(v.trim())) throw validationError('group_type_index', 'A valid integer from 0 to 4 is required.', 'invalid')
  return Number(v.trim())
}

function readLimit(q: Query): number {
  const v = Number(text(q, 'limit'))
  return Number.isSafeInteger(v) && v > 0 ? Math.min(v, MAX_LIMIT) : DEFAULT_LIMIT
}

/** PostHog's opaque cursor: base64url of `{c: created_at µs, k: key}`; an unreadable one starts over, as PostHog does. */
export function encodeCursor(g: Group): string {
  return Buffer.from(JSON.stringify({ c: g.createdAtMicros, k: g.key })).toString('base64url')
}

export function decodeCursor(raw: string | undefined): GroupCursor | undefined {
  if (!raw) return undefined
  try {
    const data = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { c?: unknown; k?: unknown }
    if (typeof data.k !== 'string' || !/^-?\d{1,18}$/.test(String(data.c))) return undefined
    return { createdAtMicros: String(data.c), key: data.k }
  } catch {
    return undefined
  }
}

function nextLink(req: FastifyRequest, cursor: string): string {
  const url = new URL(req.url, `${req.protocol}://${req.headers.host ?? 'localhost'}`)
  url.searchParams.set('cursor', cursor)
  return url.toString()
}

/**
 * PostHog's groups API (ee/clickhouse/views/groups.py): `GET .../groups/?group_type_index=N`
 * (`search` over key and name, `group_key` contains, cursor pagination `{next, previous, results}`,
 * newest first) and `GET .../groups/find/?group_type_index=N&group_key=K` (404 when absent).
 */
export async function groupRoutes(app: FastifyInstance, opts: { groups: GroupService }) {
  const base = '/api/projects/:project_id/groups/'
  addRoute(app, 'GET', base, async (req) => {
    const q = req.query as Query
    const typeIndex = readTypeIndex(q)
    const { groups, hasMore } = await opts.groups.list(req.project, {
      typeIndex,
      search: text(q, 'search')?.trim() || undefined,
      keyContains: text(q, 'group_key') || undefined,
      after: decodeCursor(text(q, 'cursor')),
      limit: readLimit(q),
    })
    const last = groups[groups.length - 1]
    return { next: hasMore && last ? nextLink(req, encodeCursor(last)) : null, previous: null, results: groups.map(toGroupJson) }
  })
  addRoute(app, 'GET', `${base}find/`, async (req) => {
    const q = req.query as Query
    const typeIndex = readTypeIndex(q)
    const key = text(q, 'group_key')
    if (!key) throw validationError('group_key', 'This query parameter is required.', 'required')
    return { ...toGroupJson(await opts.groups.find(req.project, typeIndex, key)), notebook: null }
  })
}
