const KEY_STORAGE = 'tally.personalApiKey'

/** A non-2xx answer of the API, with PostHog's error body when it has one. */
export class ApiError extends Error {
  constructor(
    readonly status: number, message: string, readonly code: string | null = null, readonly attr: string | null = null,
    /** Seconds of a 429's or 503's Retry-After header (null without one). */
    readonly retryAfter: number | null = null,
  ) {
    super(message)
  }
}

/** The personal API key the app signs in with when sessions are not used (kept in this browser only). */
export const personalKey = {
  get: () => localStorage.getItem(KEY_STORAGE),
  set: (key: string) => localStorage.setItem(KEY_STORAGE, key),
  clear: () => localStorage.removeItem(KEY_STORAGE),
}

function cookie(name: string): string | null {
  const m = document.cookie.split('; ').find((c) => c.startsWith(`${name}=`))
  return m ? decodeURIComponent(m.slice(name.length + 1)) : null
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

/**
 * Calls Tally's API as the signed-in user: the session cookie (with the CSRF header on every
 * state-changing request), or the personal API key when the user signed in with one.
 */
export async function api<T>(path: string, opts: { method?: Method; body?: unknown } = {}): Promise<T> {
  const method = opts.method ?? 'GET'
  const headers: Record<string, string> = { accept: 'application/json' }
  const key = personalKey.get()
  if (key) headers.authorization = `Bearer ${key}`
  else if (method !== 'GET') headers['x-csrftoken'] = cookie('tally_csrftoken') ?? ''
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(path, { method, headers, credentials: 'same-origin', body: opts.body === undefined ? undefined : JSON.stringify(opts.body) })
  const text = await res.text()
  let json: unknown = null
  try {
    json = text ? JSON.parse(text) : null
  } catch {
    json = null
  }
  if (!res.ok) {
    const err = (json ?? {}) as { detail?: string; code?: string; attr?: string }
    const retryAfter = Number(res.headers.get('retry-after'))
    throw new ApiError(res.status, err.detail ?? `${res.status} ${res.statusText}`, err.code ?? null, err.attr ?? null, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null)
  }
  return json as T
}

/** A GET of a text answer (JSON lines, CSV) as the signed-in user; non-2xx throws ApiError. */
export async function apiText(path: string): Promise<string> {
  const key = personalKey.get()
  const res = await fetch(path, { headers: key ? { authorization: `Bearer ${key}` } : {}, credentials: 'same-origin' })
  const text = await res.text()
  if (!res.ok) {
    let detail = `${res.status} ${res.statusText}`
    try {
      detail = (JSON.parse(text) as { detail?: string }).detail ?? detail
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiError(res.status, detail)
  }
  return text
}

/** A readable message for any error a query or mutation threw. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.attr ? `${err.message} (${err.attr})` : err.message
  return err instanceof Error ? err.message : String(err)
}
