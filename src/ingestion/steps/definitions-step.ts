import type { Logger } from 'pino'
import {
  collectDefinitions, eventKey, eventPropertyKey, propertyKey, type DefinitionSource, type SeenDefinitions,
} from '../../domain/definitions/index.ts'
import type { DefinitionStore } from '../../modules/definitions/definition-store.ts'
import { classifyFailure } from '../../shared/classify-failure.ts'
import type { StoredEvent } from '../event-store.ts'
import { propertiesOf } from '../event-properties.ts'
import type { IngestionCounters } from '../ingestion-counters.ts'
import { ok, type BatchStep } from '../results.ts'

export interface DefinitionsStepDeps {
  store: Pick<DefinitionStore, 'recordSeen'>
  /** A group type's index by name (the group-types service's cache); undefined when it has none. */
  groupTypeIndex?: (projectId: number, groupType: string) => Promise<number | undefined>
  /** A definition written less than this long ago is not written again (default one hour). */
  refreshAfterMs?: number
  /** How many definitions the in-process cache remembers (default 100,000; the oldest go first). */
  maxCached?: number
  /**
   * An event naming more property keys than this (its own, `$set`, `$set_once`, `$group_set`) adds
   * its event name only, and is counted (PostHog's property-defs service skips such an event too,
   * `update_count_skip_threshold`, default 10,000).
   */
  maxPerEvent?: number
  /** Rows per statement: the step yields to the event loop between statements (default 1,000). */
  chunkRows?: number
  /** Counts events whose definitions were skipped (`limited` / `definitions_skipped`). */
  counters?: Pick<IngestionCounters, 'add'>
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
  const maxPerEvent = deps.maxPerEvent ?? 10_000
  const chunkRows = deps.chunkRows ?? 1_000
  const now = deps.now ?? (() => new Date())
  const cache = new Map<string, Written>()

  const isFresh = (key: string, at: number, typed = true) => {
    const w = cache.get(key)
    return w !== undefined && at - w.at < refreshAfter && (w.typed || !typed)
  }
  const remember = (key: string, at: number, typed: boolean) => {
    cache.delete(key) // re-inserted last: the Map's order is the eviction order
    cache.set(key, { at, typed })
  }
  // Once per batch, with ONE iterator: a fresh `cache.keys()` per eviction would walk again over
  // every entry deleted before it (a Map keeps deleted slots until it rehashes), quadratic in the
  // batch (14 s for one event of 100,000 keys).
  const evict = () => {
    if (cache.size <= maxCached) return
    for (const oldest of cache.keys()) {
      cache.delete(oldest)
      if (cache.size <= maxCached) break
    }
  }

  return {
    name: 'definitions',
    async run(batch) {
      const results = batch.map((e) => ok(e))
      const seenAt = now()
      const at = seenAt.getTime()
      const { sources, skipped } = await readSources(batch, deps.groupTypeIndex, maxPerEvent)
      if (skipped > 0) deps.counters?.add('limited', 'definitions_skipped', skipped)
      const seen = collectDefinitions(sources)
      const todo: SeenDefinitions = {
        events: seen.events.filter((e) => !isFresh(eventKey(e), at)),
        properties: seen.properties.filter((p) => !isFresh(propertyKey(p), at, p.propertyType !== null)),
        // Pairs have no timestamp: once written, they stay written.
        eventProperties: seen.eventProperties.filter((p) => !cache.has(eventPropertyKey(p))),
      }
      if (todo.events.length + todo.properties.length + todo.eventProperties.length === 0) return results
      try {
        for (const chunk of chunksOf(todo, chunkRows)) {
          await deps.store.recordSeen(chunk, seenAt)
          for (const e of chunk.events) remember(eventKey(e), at, true)
          for (const p of chunk.properties) remember(propertyKey(p), at, p.propertyType !== null)
          for (const p of chunk.eventProperties) remember(eventPropertyKey(p), Infinity, true)
          // The metadata store may run on this thread (PGlite): let /_health, /decide and capture in between.
          await new Promise<void>((resolve) => setImmediate(resolve))
        }
      } catch (err) {
        if (classifyFailure(err) === 'transient') throw err
        deps.logger?.warn({ err, events: todo.events.length, properties: todo.properties.length }, 'definitions not recorded for this batch; its events go on')
        return results
      } finally {
        evict()
      }
      return results
    },
  }
}

/** What an event whose properties are unreadable or over the limit contributes: its name only. */
const NO_PROPERTIES: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>

/** Definitions of at most `rows` rows each (events, properties and pairs counted together), in order. */
function* chunksOf(todo: SeenDefinitions, rows: number): Generator<SeenDefinitions> {
  const all = [
    ...todo.events.map((e) => ({ t: 'events' as const, e })),
    ...todo.properties.map((e) => ({ t: 'properties' as const, e })),
    ...todo.eventProperties.map((e) => ({ t: 'eventProperties' as const, e })),
  ]
  for (let i = 0; i < all.length; i += rows) {
    const chunk: SeenDefinitions = { events: [], properties: [], eventProperties: [] }
    for (const item of all.slice(i, i + rows)) (chunk[item.t] as unknown[]).push(item.e)
    yield chunk
  }
}

/** Property keys an event names for definitions (own, `$set`, `$set_once`, `$group_set`), counted up to `limit` + 1. */
function keyCount(properties: Record<string, unknown>, limit: number): number {
  let n = 0
  for (const bag of [properties, properties.$set, properties.$set_once, properties.$group_set]) {
    if (bag === null || typeof bag !== 'object' || Array.isArray(bag)) continue
    for (const _ in bag) if (++n > limit) return n
  }
  return n
}

/**
 * The batch's events as the collector reads them; an event whose properties do not parse, or that
 * names more than `maxPerEvent` keys, adds its name only (NO_PROPERTIES).
 */
async function readSources(
  batch: readonly StoredEvent[], groupTypeIndex: DefinitionsStepDeps['groupTypeIndex'], maxPerEvent: number,
): Promise<{ sources: DefinitionSource[]; skipped: number }> {
  const sources: DefinitionSource[] = new Array(batch.length)
  let skipped = 0
  for (let i = 0; i < batch.length; i++) {
    const e = batch[i]!
    let properties = NO_PROPERTIES
    try {
      // Parsed once per batch: the persons step before this one has usually parsed them already.
      properties = propertiesOf(e)
    } catch {
      // The persons step dead-letters unreadable properties; a stray one here only adds its name.
    }
    if (keyCount(properties, maxPerEvent) > maxPerEvent) {
      properties = NO_PROPERTIES
      skipped++
    }
    sources[i] = { projectId: e.projectId, event: e.event, properties }
    if (e.event === '$groupidentify' && groupTypeIndex && typeof properties.$group_type === 'string') {
      sources[i]!.groupTypeIndex = await groupTypeIndex(e.projectId, properties.$group_type)
    }
  }
  return { sources, skipped }
}
