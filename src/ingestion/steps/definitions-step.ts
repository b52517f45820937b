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
/** When the definitions of a shape's events were last recorded, and how many top-level keys it has (up to the limit + 1). */
interface Shape { at: number; keys: number }

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
  // Shapes (step-properties.ts) whose events' definitions were recorded, per project and event name.
  const shapes = new Map<string, Shape>()

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
  const evict = (map: Map<string, unknown>) => {
    if (map.size <= maxCached) return
    for (const oldest of map.keys()) {
      map.delete(oldest)
      if (map.size <= maxCached) break
    }
  }
  const knownShape = (key: string | null, at: number): Shape | undefined => {
    const known = key === null ? undefined : shapes.get(key)
    return known !== undefined && at - known.at < refreshAfter ? known : undefined
  }
  const rememberShapes = (seen: ReadonlyMap<string, number>, at: number) => {
    for (const [key, keys] of seen) {
      shapes.delete(key)
      shapes.set(key, { at, keys })
    }
  }

  return {
    name: 'definitions',
    async run(batch) {
      const results = batch.map((e) => ok(e))
      const seenAt = now()
      const at = seenAt.getTime()
      const { sources, skipped, newShapes } = await readSources(batch, { groupTypeIndex: deps.groupTypeIndex, maxPerEvent, knownShape: (key) => knownShape(key, at) })
      if (skipped > 0) deps.counters?.add('limited', 'definitions_skipped', skipped)
      const seen = collectDefinitions(sources)
      const todo: SeenDefinitions = {
        events: seen.events.filter((e) => !isFresh(eventKey(e), at)),
        properties: seen.properties.filter((p) => !isFresh(propertyKey(p), at, p.propertyType !== null)),
        // Pairs have no timestamp: once written, they stay written.
        eventProperties: seen.eventProperties.filter((p) => !cache.has(eventPropertyKey(p))),
      }
      if (todo.events.length + todo.properties.length + todo.eventProperties.length === 0) {
        rememberShapes(newShapes, at)
        evict(shapes)
        return results
      }
      try {
        for (const chunk of chunksOf(todo, chunkRows)) {
          await deps.store.recordSeen(chunk, seenAt)
          for (const e of chunk.events) remember(eventKey(e), at, true)
          for (const p of chunk.properties) remember(propertyKey(p), at, p.propertyType !== null)
          for (const p of chunk.eventProperties) remember(eventPropertyKey(p), Infinity, true)
          // The metadata store may run on this thread (PGlite): let /_health, /decide and capture in between.
          await new Promise<void>((resolve) => setImmediate(resolve))
        }
        rememberShapes(newShapes, at)
      } catch (err) {
        if (classifyFailure(err) === 'transient') throw err
        deps.logger?.warn({ err, events: todo.events.length, properties: todo.properties.length }, 'definitions not recorded for this batch; its events go on')
        return results
      } finally {
        evict(cache)
        evict(shapes)
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

/** Keys of `bag` when it is an object, counted up to `limit` + 1. */
function countKeys(bag: unknown, limit: number): number {
  let n = 0
  if (bag === null || typeof bag !== 'object' || Array.isArray(bag)) return n
  for (const _ in bag) if (++n > limit) return n
  return n
}

/** Keys an event's properties name for definitions besides their own: those of `$set`, `$set_once` and `$group_set`. */
function updateKeyCount(properties: Record<string, unknown>, limit: number): number {
  let n = 0
  for (const bag of [properties.$set, properties.$set_once, properties.$group_set]) if ((n += countKeys(bag, limit)) > limit) return n
  return n
}

/** The key of an event's shape in the step's shape cache; null when the event has none (a message of the previous format). */
function shapeKey(e: StoredEvent): string | null {
  return e.shape === undefined ? null : `${e.projectId}\u0000${e.event}\u0000${e.shape}`
}

interface ReadOptions {
  groupTypeIndex: DefinitionsStepDeps['groupTypeIndex']
  maxPerEvent: number
  /** The shape's entry when its events' definitions were recorded less than `refreshAfterMs` ago. */
  knownShape(key: string | null): Shape | undefined
}

/**
 * The batch's events as the collector reads them; an event whose properties do not parse, or that
 * names more than `maxPerEvent` keys, adds its name only (NO_PROPERTIES). An event of a shape
 * recorded lately is not parsed: every top-level key and type of it is in the cache, so it adds its
 * step properties only (its `$set`, `$set_once` and `$group_set`, which the shape does not cover).
 * `newShapes`: the other events' shapes, with their count of top-level keys, to remember once written.
 * So a definition's `last_seen_at` moves at least every 2 x `refreshAfterMs` while it is seen (a shape
 * recorded just before its definitions went stale is skipped for one more period), and a definition
 * evicted from the cache is written again when its shape next comes up for refresh.
 */
async function readSources(
  batch: readonly StoredEvent[], opts: ReadOptions,
): Promise<{ sources: DefinitionSource[]; skipped: number; newShapes: Map<string, number> }> {
  const sources: DefinitionSource[] = new Array(batch.length)
  const newShapes = new Map<string, number>()
  let skipped = 0
  for (let i = 0; i < batch.length; i++) {
    const e = batch[i]!
    const key = shapeKey(e)
    const known = opts.knownShape(key)
    let properties = NO_PROPERTIES
    let ownKeys: number
    if (known !== undefined && e.stepProperties !== undefined) {
      properties = e.stepProperties
      ownKeys = known.keys
    } else {
      try {
        // Parsed once per batch: a step before this one may have parsed them already.
        properties = propertiesOf(e)
      } catch {
        // The persons step dead-letters unreadable properties; a stray one here only adds its name.
      }
      ownKeys = countKeys(properties, opts.maxPerEvent)
      if (key !== null) newShapes.set(key, ownKeys)
    }
    if (ownKeys + updateKeyCount(properties, opts.maxPerEvent) > opts.maxPerEvent) {
      properties = NO_PROPERTIES
      skipped++
    }
    sources[i] = { projectId: e.projectId, event: e.event, properties }
    if (e.event === '$groupidentify' && opts.groupTypeIndex && typeof properties.$group_type === 'string') {
      sources[i]!.groupTypeIndex = await opts.groupTypeIndex(e.projectId, properties.$group_type)
    }
  }
  return { sources, skipped, newShapes }
}
