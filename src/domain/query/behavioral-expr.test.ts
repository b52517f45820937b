import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AppError } from '../../shared/errors.ts'
import { behavioralActionIds, behavioralExpr, behavioralShapeProblem, type BehavioralInputs } from './behavioral-expr.ts'
import type { Expr } from './query-plan.ts'

const inputs: BehavioralInputs = { now: new Date('2024-06-30T12:00:00.250Z'), timeZone: 'UTC', actions: new Map([[7, [{ event: 'purchase' }]]]) }
const build = (fields: Record<string, unknown>) => behavioralExpr({ type: 'behavioral', key: 'purchase', event_type: 'events', ...fields }, 'query.properties.0', inputs, undefined)

function refusal(fn: () => unknown): AppError {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof AppError)
    return err
  }
  assert.fail('no error')
}

/** The instants a plan binds, in order. */
function timesOf(e: unknown): string[] {
  const out: string[] = []
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === 'object') {
      const n = v as Record<string, unknown>
      if (n.op === 'time') out.push((n.value as Date).toISOString())
      else Object.values(n).forEach(walk)
    }
  }
  walk(e)
  return out
}

test('a criterion is a membership of the event person in persons grouped from events', () => {
  const e = build({ value: 'performed_event', time_value: 1, time_interval: 'month' }) as Extract<Expr, { op: 'in_plan' }>
  assert.equal(e.op, 'in_plan')
  assert.deepEqual(e.arg, { op: 'person_id' })
  assert.equal(e.plan.source.kind, 'events')
  assert.deepEqual(e.plan.groupBy, [{ op: 'person_id' }])
  // Calendar months back from now, milliseconds kept.
  assert.deepEqual(timesOf(e), ['2024-05-30T12:00:00.250Z', '2024-06-30T12:00:00.250Z'])
})

test('explicit_datetime bounds the window instead of time_value', () => {
  const e = build({ value: 'performed_event', explicit_datetime: '2024-06-01', explicit_datetime_to: '2024-06-10' })
  assert.deepEqual(timesOf(e), ['2024-06-01T00:00:00.000Z', '2024-06-10T00:00:00.000Z'])
})

test('missing or impossible fields are 400s naming the filter and the field', () => {
  const missing = refusal(() => build({ value: 'performed_event_multiple', operator: 'gte', time_value: 7, time_interval: 'day' }))
  assert.equal(missing.attr, 'query.properties.0')
  assert.match(missing.message, /operator_value/)
  assert.match(refusal(() => build({ value: 'performed_event', time_value: 7, time_interval: 'fortnight' })).message, /time_interval/)
  assert.match(refusal(() => build({ value: 'performed_event_multiple', operator: 'icontains', operator_value: 1, time_value: 7, time_interval: 'day' })).message, /operator/)
  assert.match(refusal(() => build({ value: 'stopped_performing_event', time_value: 7, time_interval: 'day', seq_time_value: 2, seq_time_interval: 'week' })).message, /more recent/)
  const periods = { value: 'performed_event_regularly', operator: 'gte', operator_value: 1, time_value: 1, time_interval: 'week' }
  assert.match(refusal(() => build({ ...periods, min_periods: 5, total_periods: 4 })).message, /cannot be greater than total_periods/)
  assert.match(refusal(() => build({ value: 'performed_event', event_type: 'actions', key: 8, time_value: 1, time_interval: 'day' })).message, /Action 8 does not exist/)
})

test('a stored criterion needs a known value, event_type and key; the action ids it names are found', () => {
  assert.equal(behavioralShapeProblem({ value: 'performed_event', event_type: 'actions', key: 7 }), null)
  assert.match(behavioralShapeProblem({ value: 'did_something', event_type: 'events', key: 'x' })!, /value/)
  assert.match(behavioralShapeProblem({ value: 'performed_event', event_type: 'events', key: '' })!, /key/)
  const group = { type: 'OR', values: [{ type: 'AND', values: [{ type: 'behavioral', value: 'performed_event_sequence', event_type: 'actions', key: '7', seq_event_type: 'actions', seq_event: 9 }] }] }
  assert.deepEqual(behavioralActionIds(group), [7, 9])
})
