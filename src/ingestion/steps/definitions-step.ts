import type { Logger } from 'pino'
import {
  collectDefinitions, eventKey, eventPropertyKey, propertyKey, type DefinitionSource, type SeenDefinitions,
} from '../../domain/definitions/index.ts'
import type { DefinitionStore } from '../../modules/definitions/definition-store.ts'
import { classifyFailure } from '../../shared/classify-failure.ts'
import type { StoredEvent } from '../event-store.ts'
import { propertiesOf } from '../event-properties.ts'
import { ok, type BatchStep } from '../results.ts'

export interface DefinitionsStepDeps {
  store: Pick<DefinitionStore, 'recordSeen'>
  /** A group type's index by name (the group-types service's cache); undefined when it has none. */
  groupTypeIndex?: (projectId: number, groupType: string) => Promise<number | undefined>
  /** A definition written less than this long ago is not written again (default one hour). */
  refreshAfterMs?: number
  /** How many definitions the in-process cache remembers (default 100,000; the oldest go first). */
  maxCached?: number
  logger?: Pick<Logger, 'warn'>
  now?: () => Date
}

/** When a cached definition was last written, and whether its stored type is known. */
interface Written { at: number; typed: boolean }

/**
 * Keeps event and property definitions current (PostHog's property-defs service), set-based per
 * micro-batch: the batch's distinct definitions are collected in memory, and only those the cache
 * does not know, whose `last_seen_at` is over `refreshAfterMs` old, or whose type is now known, are
 * written, in one statement per table. A steady stream of known events writes nothing.
 *
 * Definitions are derived data: they never cost an event. A store that cannot write now (transient)
 * fails the batch so it comes again (every step is idempotent); any other failure is logged and the
 * events go on (the definitions are written the next time they are seen, the cache not being told).
 */
export function createDefinitionsStep(deps: DefinitionsStepDeps): BatchStep<StoredEvent, StoredEvent> {
  const refreshAfter = deps.refreshAfterMs ?? 3_600_000
  const maxCached = deps.maxCached ?? 100_000
  const now = deps.now ?? (() => new Date())
  const cache = new Map<string, Written>()

  const isFresh = (key: string, at: number, typed = true) => {
    const w = cache.get(key)
    return w !== undefined && at - w.at < refreshAfter && (w.typed || !typed)
  }
  const remember = (key: string, at: number, typed: boolean) => {
    cache.delete(key) // re-inserted last: the Map's order is the eviction order
    cache.set(key, { at, typed })
    for (const oldest of cache.keys()) {
      if (cache.size <= maxCached) break
      cache.delete(oldest)
    }
  }

  return {
    name: 'definitions',
    async run(batch) {
      const results = batch.map((e) => ok(e))
      const seenAt = now()
      const at = seenAt.getTime()
      const seen = collectDefinitions(await readSources(batch, deps.groupTypeIndex))
      const todo: SeenDefinitions = {
        events: seen.events.filter((e) => !isFresh(eventKey(e), at)),
        properties: seen.properties.filter((p) => !isFresh(propertyKey(p), at, p.propertyType !== null)),
        // Pairs have no timestamp: once written, they stay written.
        eventProperties: seen.eventProperties.filter((p) => !cache.has(eventPropertyKey(p))),
      }
      if (todo.events.length + todo.properties.length + todo.eventProperties.length === 0) return results
      try {
        await deps.store.recordSeen(todo, seenAt)
      } catch (err) {
        if (classifyFailure(err) === 'transient') throw err
        deps.logger?.warn({ err, events: todo.events.length, properties: todo.properties.length }, 'definitions not recorded for this batch; its events go on')
        return results
      }
      for (const e of todo.events) remember(eventKey(e), at, true)
      for (const p of todo.properties) remember(propertyKey(p), at, p.propertyType !== null)
      for (const p of todo.eventProperties) remember(eventPropertyKey(p), Infinity, true)
      return results
    },
  }
}

/** The batch's events as the collector reads them; an event whose properties do not parse adds its name only. */
async function readSources(
  batch: readonly StoredEvent[], groupTypeIndex: DefinitionsStepDeps['groupTypeIndex'],
): Promise<DefinitionSource[]> {
  const sources: DefinitionSource[] = new Array(batch.length)
  for (let i = 0; i < batch.length; i++) {
    const e = batch[i]!
    let properties: Record<string, unknown> = {}
    try {
      // Parsed once per batch: the persons step before this one has usually parsed them already.
      properties = propertiesOf(e)
    } catch {
      // The persons step dead-letters unreadable properties; a stray one here only adds its name.
    }
    sources[i] = { projectId: e.projectId, event: e.event, properties }
    if (e.event === '$groupidentify' && groupTypeIndex && typeof properties.$group_type === 'string') {
      sources[i]!.groupTypeIndex = await groupTypeIndex(e.projectId, properties.$group_type)
    }
  }
  return sources
}
