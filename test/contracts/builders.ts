import assert from 'node:assert/strict'
import { AppError } from '../../src/shared/errors.ts'
import type { ActionInput, ActionStep } from '../../src/modules/actions/action-types.ts'
import type { CohortWrite } from '../../src/modules/cohorts/cohort-types.ts'
import type { DashboardInput } from '../../src/modules/dashboards/dashboard-types.ts'
import type { FeatureFlagWrite } from '../../src/modules/feature-flags/feature-flag-types.ts'
import type { InsightInput } from '../../src/modules/insights/insight-types.ts'
import type { StoredEvent } from '../../src/ingestion/event-store.ts'
import type { DeadLetter } from '../../src/ingestion/dead-letter-store.ts'
import { randomUUID } from 'node:crypto'

/**
 * A JSON document that catches lossy storage: unicode outside the BMP, escapes, nesting, the
 * largest exact integers, floats, empty containers, null and booleans.
 */
export const TRICKY_JSON = {
  text: 'café ☕ 日本語 😀 \u00e9\u0301 "quoted" \\back\\slash\n\ttab </script>',
  nested: { a: { b: { c: [1, [2, [3, { d: 'deep' }]]] } }, empty: {}, list: [] },
  maxSafe: Number.MAX_SAFE_INTEGER,
  minSafe: Number.MIN_SAFE_INTEGER,
  float: 0.1,
  tiny: 5e-324,
  huge: 1.7976931348623157e308,
  negZeroIsZero: 0,
  nothing: null,
  yes: true,
  no: false,
  'key with spaces and ünïcode 🔑': 'v',
}

export function aFlag(over: Partial<FeatureFlagWrite> = {}): FeatureFlagWrite {
  return {
    key: `flag-${randomUUID().slice(0, 8)}`,
    name: 'A flag',
    filters: { groups: [{ properties: [], rollout_percentage: 50 }] },
    active: true,
    deleted: false,
    ensureExperienceContinuity: false,
    tags: [],
    evaluationRuntime: 'all',
    ...over,
  }
}

export function aCohort(over: Partial<CohortWrite> = {}): CohortWrite {
  return {
    name: 'A cohort',
    description: '',
    filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'email', value: 'x', type: 'person', operator: 'icontains' }] }] } } as CohortWrite['filters'],
    groups: [],
    isStatic: false,
    deleted: false,
    ...over,
  }
}

export function aStep(over: Partial<ActionStep> = {}): ActionStep {
  return {
    id: randomUUID(),
    event: '$pageview',
    tag_name: null,
    text: null,
    text_matching: null,
    href: null,
    href_matching: null,
    selector: null,
    url: 'https://example.com',
    url_matching: 'contains',
    name: null,
    properties: [],
    ...over,
  }
}

export function anAction(over: ActionInput = {}): ActionInput {
  return { name: `action-${randomUUID().slice(0, 8)}`, description: '', tags: [], steps: [aStep()], ...over }
}

export function aDashboard(over: DashboardInput = {}): DashboardInput {
  return { name: `dashboard-${randomUUID().slice(0, 8)}`, description: '', pinned: false, filters: {}, tags: [], ...over }
}

export function anInsight(over: InsightInput = {}): InsightInput {
  return { name: `insight-${randomUUID().slice(0, 8)}`, description: '', query: { kind: 'InsightVizNode' }, filters: {}, ...over }
}

export function anEvent(over: Partial<StoredEvent> = {}): StoredEvent {
  return {
    uuid: randomUUID(),
    projectId: 1,
    event: '$pageview',
    distinctId: 'user-1',
    properties: JSON.stringify({ $current_url: 'https://example.com' }),
    elementsChain: '',
    timestamp: new Date('2026-01-02T03:04:05.678Z'),
    createdAt: new Date('2026-01-02T03:04:06.000Z'),
    personId: null,
    ...over,
  }
}

export function aDeadLetter(over: Partial<DeadLetter> = {}): DeadLetter {
  return {
    payload: JSON.stringify({ event: 'x' }),
    uuid: randomUUID(),
    projectId: 1,
    step: 'normalise',
    reason: 'invalid_event',
    error: null,
    failedAt: new Date('2026-01-02T03:04:05.678Z'),
    ...over,
  }
}

/** Milliseconds between two instants, absolute. */
export const apart = (a: Date, b: Date) => Math.abs(a.getTime() - b.getTime())

/** The error a rejected promise carries (fails when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await p
  } catch (err) {
    return err as { code?: string; message: string }
  }
  throw new Error('expected a rejection')
}

/**
 * Asserts the write was refused as a 400 naming `attr`: PostgreSQL cannot store U+0000, and the
 * store says so in the API's terms instead of failing with a 500.
 */
export async function assertRefusedField(p: Promise<unknown>, attr: string): Promise<void> {
  const err = await rejection(p)
  assert.ok(err instanceof AppError, `expected an AppError, got: ${err.message}`)
  assert.equal(err.code, 'validation_error')
  assert.equal(err.attr, attr)
}

/** Text with a lone surrogate, and how it reads back: as U+FFFD, the way PostgreSQL's UTF-8 holds it. */
export const LONE_SURROGATE = { written: 'half \ud83d pair', read: 'half \uFFFD pair' }
