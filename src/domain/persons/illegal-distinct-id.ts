// PostHog refuses to merge on ids that stem from a bug: plugin-server
// `worker/ingestion/persons/person-merge-service.ts` (BARE_CASE_*_ILLEGAL_IDS, isDistinctIdIllegal).
const CASE_INSENSITIVE = [
  'anonymous', 'guest', 'distinctid', 'distinct_id', 'id', 'not_authenticated', 'email', 'undefined', 'true', 'false',
]
const CASE_SENSITIVE = ['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined']

const withQuotes = (ids: string[]): string[] => [...ids, ...ids.map((id) => `'${id}'`), ...ids.map((id) => `"${id}"`)]
const INSENSITIVE_SET = new Set(withQuotes(CASE_INSENSITIVE))
const SENSITIVE_SET = new Set(withQuotes(CASE_SENSITIVE))

/**
 * True for a distinct id PostHog never merges on: blank after trimming, one of its generic ids
 * (`anonymous`, `guest`, `id`, ... in any case; `NaN`, `None`, `null`, `0`, `[object Object]` ...
 * exactly), or either of those wrapped in single or double quotes. As upstream, only the blank test
 * trims: `" guest"` is legal.
 */
export function isDistinctIdIllegal(id: string): boolean {
  return id.trim() === '' || INSENSITIVE_SET.has(id.toLowerCase()) || SENSITIVE_SET.has(id)
}
