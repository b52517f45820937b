// Plan cases of the conformance suite: every expression operation and every source kind of the plan
// IR (src/domain/query/query-plan.ts), each with its answer computed in JS over FIXTURE. The map is
// keyed by the IR's own unions, so a new operation fails to compile here until it has a case.
import { bucketKey, offsetSegments, shiftKey } from '../../src/domain/query/bucket-keys.ts'
import type { Interval } from '../../src/domain/query/date-range.ts'
import { col, lit, type Expr, type Plan, type Source } from '../../src/domain/query/query-plan.ts'
import type { StoredEvent } from '../../src/ingestion/event-store.ts'
import { anEvent } from '../contracts/builders.ts'

export const PROJECT = 7
const ZONE = 'America/New_York'
const PERSON = '01890a5d-ac96-774b-bcce-7a0c2a9c3b1e'

interface Row { d: string; e: string; t: string; p: Record<string, unknown>; pp?: Record<string, unknown>; chain?: string; person?: string }
// Around New York's spring DST change (2024-03-10) and a month end, so buckets cross both.
const ROWS: Row[] = [
  { d: 'u1', e: 'view', t: '2024-03-09T12:00:00.000Z', p: { plan: 'pro', n: 5, url: 'https://a.test/x' }, pp: { email: 'a@x.test' }, person: PERSON },
  { d: 'u1', e: 'buy', t: '2024-03-10T06:30:00.000Z', p: { plan: 'pro', n: 7.5 }, pp: { email: 'a@x.test' }, person: PERSON },
  { d: 'u2', e: 'view', t: '2024-03-10T08:00:00.000Z', p: { plan: 'free', n: '12' } },
  { d: 'u2', e: 'view', t: '2024-03-11T03:59:59.999Z', p: { n: null } },
  { d: 'u3', e: 'buy', t: '2024-03-31T23:00:00.000Z', p: { plan: 'Pro', $session_id: 's3' }, chain: 'button.btn.primary:nth-child="1"nth-of-type="1"text="Buy";div:nth-child="1"nth-of-type="1"' },
  { d: 'u3', e: 'view', t: '2024-04-01T04:00:00.000Z', p: { $session_id: 's3' } },
]

export const FIXTURE: StoredEvent[] = [
  ...ROWS.map((r) => anEvent({
    projectId: PROJECT, distinctId: r.d, event: r.e, timestamp: new Date(r.t), properties: JSON.stringify(r.p),
    personProperties: JSON.stringify(r.pp ?? {}), elementsChain: r.chain ?? '', personId: r.person ?? null,
  })),
  // Another project's event: never read by a plan of PROJECT.
  anEvent({ projectId: PROJECT + 1, distinctId: 'u1', event: 'view', timestamp: new Date('2024-03-10T00:00:00Z') }),
]

export interface PlanCase { title: string; plan: Plan; expect: Array<Record<string, unknown>> }

const ts = col('timestamp')
const isView: Expr = { op: 'binary', fn: '=', left: col('e'), right: lit('view') }
/** The events as (d: distinct id, e: event, t: epoch ms), the source of the sequence cases. */
const EVENTS_D_E_T = { source: { kind: 'events' as const }, select: [{ alias: 'd', expr: col('distinct_id') }, { alias: 'e', expr: col('event') }, { alias: 't', expr: { op: 'epoch_ms' as const, arg: ts } }] }
const byTime = [{ expr: ts }]
const fromEvents = (select: Array<[string, Expr]>, extra: Partial<Plan> = {}): Plan => ({
  source: { kind: 'events' }, select: select.map(([alias, expr]) => ({ alias, expr })), orderBy: byTime, ...extra,
})
/**
 * Window calls over the events as the domain's plans write them: over a plan of the events' columns
 * (engines without window functions compute them on that relation; see EventDialect.windowRelation).
 */
const overEvents = (select: Array<[string, Expr]>): Plan => ({
  source: { kind: 'plan', plan: fromEvents([['distinct_id', col('distinct_id')], ['event', col('event')], ['timestamp', ts]], { orderBy: undefined }) },
  select: select.map(([alias, expr]) => ({ alias, expr })),
  orderBy: byTime,
})
const each = <T>(f: (r: Row, i: number) => T): T[] => ROWS.map(f)
const prop = (key: string): Expr => ({ op: 'property', source: 'event', key })
const num = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : null)
const text = (v: unknown): string | null => (v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v))
const ms = (r: Row) => Date.parse(r.t)
const SPAN = offsetSegments(new Date('2024-03-01T00:00:00Z'), new Date('2024-04-02T00:00:00Z'), ZONE)
const bucket = (interval: Interval, arg: Expr = ts): Expr => ({ op: 'bucket', interval, offsets: SPAN, arg })
const agg = (fn: Extract<Expr, { op: 'aggregate' }>['fn'], arg?: Expr, more: Partial<Extract<Expr, { op: 'aggregate' }>> = {}): Expr => ({ op: 'aggregate', fn, arg, ...more })
const nums = ROWS.map((r) => num(r.p.n)).filter((n): n is number => n !== null)
const buys: Plan = { source: { kind: 'events' }, select: [{ alias: 'd', expr: col('distinct_id') }], where: { op: 'binary', fn: '=', left: col('event'), right: lit('buy') } }
const perPerson: Plan = { source: { kind: 'events' }, select: [{ alias: 'd', expr: col('distinct_id') }, { alias: 'c', expr: agg('count') }], groupBy: [col('distinct_id')] }
const counts = ROWS.reduce<Record<string, number>>((m, r) => ({ ...m, [r.d]: (m[r.d] ?? 0) + 1 }), {})
const sorted = (o: Record<string, number>) => Object.entries(o).sort(([a], [b]) => a.localeCompare(b))

export type CaseKey = Expr['op'] | `source:${Source['kind']}` | 'shared_plan' | 'group_order_limit'

export const PLAN_CASES: Record<CaseKey, PlanCase[]> = {
  column: [{ title: 'event and distinct_id, by time', plan: fromEvents([['e', col('event')], ['d', col('distinct_id')]]), expect: each((r) => ({ e: r.e, d: r.d })) }],
  literal: [{ title: 'numbers, text, boolean, NULL', plan: fromEvents([['a', lit(3)], ['b', lit(2.5)], ['c', lit("it's")], ['f', lit(true)], ['z', lit(null)]], { limit: 1 }), expect: [{ a: 3, b: 2.5, c: "it's", f: true, z: null }] }],
  time: [{ title: 'events at or after an instant', plan: fromEvents([['d', col('distinct_id')]], { where: { op: 'binary', fn: '>=', left: ts, right: { op: 'time', value: new Date('2024-03-10T07:00:00Z') } } }), expect: ROWS.filter((r) => ms(r) >= Date.parse('2024-03-10T07:00:00Z')).map((r) => ({ d: r.d })) }],
  property: [
    { title: 'event property text (numbers as text, JSON null and absent as NULL)', plan: fromEvents([['v', prop('plan')], ['n', prop('n')]]), expect: each((r) => ({ v: text(r.p.plan), n: text(r.p.n) })) },
    { title: 'person property on the event', plan: fromEvents([['v', { op: 'property', source: 'person', key: 'email' }]]), expect: each((r) => ({ v: text(r.pp?.email) })) },
  ],
  properties: [{ title: 'the whole bag is JSON of the stored properties', plan: fromEvents([['ok', { op: 'binary', fn: '=', left: { op: 'to_number', arg: { op: 'property', source: 'event', key: 'n' } }, right: lit(5) }], ['has', { op: 'not', arg: { op: 'is_null', arg: { op: 'properties', source: 'event' } } }]], { limit: 1 }), expect: [{ ok: true, has: true }] }],
  property_bundle: [{ title: 'the first event\'s properties carried by arg_min, read after', plan: { source: { kind: 'plan', plan: { source: { kind: 'events' }, select: [{ alias: 'd', expr: col('distinct_id') }, { alias: 'b', expr: agg('arg_min', { op: 'property_bundle', keys: ['plan', 'n'] }, { by: { op: 'epoch_ms', arg: ts } }) }], groupBy: [col('distinct_id')] } }, select: [{ alias: 'd', expr: col('d') }, { alias: 'plan', expr: { op: 'bundle_property', arg: col('b'), at: 0 } }, { alias: 'n', expr: { op: 'bundle_property', arg: col('b'), at: 1 } }], orderBy: [{ expr: col('d') }] }, expect: [...new Set(ROWS.map((r) => r.d))].sort().map((d) => { const r = ROWS.find((x) => x.d === d)!; return { d, plan: text(r.p.plan), n: text(r.p.n) } }) }],
  bundle_property: [{ title: 'an item of the event\'s own list, NULL when absent', plan: fromEvents([['u', { op: 'bundle_property', arg: { op: 'property_bundle', keys: ['plan', 'url'] }, at: 1 }]]), expect: each((r) => ({ u: text(r.p.url) })) }],
  person_id: [{ title: 'the person on the event, NULL for personless', plan: fromEvents([['p', { op: 'to_text', arg: { op: 'person_id' } }]]), expect: each((r) => ({ p: r.person ?? null })) }],
  floor: [{ title: 'floor of numbers', plan: fromEvents([['f', { op: 'floor', arg: { op: 'to_number', arg: prop('n') } }]]), expect: each((r) => ({ f: num(r.p.n) === null ? null : Math.floor(num(r.p.n)!) })) }],
  to_number: [{ title: 'text to double, NULL when not a number', plan: fromEvents([['n', { op: 'to_number', arg: prop('n') }]]), expect: each((r) => ({ n: num(r.p.n) })) }],
  bucket: (['hour', 'day', 'week', 'month'] as const).map((interval) => ({
    title: `${interval} keys in ${ZONE}`, plan: fromEvents([['k', bucket(interval)]]), expect: each((r) => ({ k: bucketKey(new Date(r.t), interval, ZONE) })),
  })),
  shift: [
    { title: 'month keys moved by a literal', plan: fromEvents([['k', { op: 'shift', interval: 'month', n: -1, arg: bucket('month') }]]), expect: each((r) => ({ k: shiftKey(bucketKey(new Date(r.t), 'month', ZONE), 'month', -1) })) },
    { title: 'day keys moved by an expression', plan: fromEvents([['k', { op: 'shift', interval: 'day', n: lit(2), arg: bucket('day') }]]), expect: each((r) => ({ k: shiftKey(bucketKey(new Date(r.t), 'day', ZONE), 'day', 2) })) },
  ],
  time_of_ms: [{ title: 'an instant from milliseconds (a whole second: ClickHouse keeps seconds)', plan: fromEvents([['m', { op: 'epoch_ms', arg: { op: 'time_of_ms', arg: lit(1_710_072_000_000) } }]], { limit: 1 }), expect: [{ m: 1_710_072_000_000 }] }],
  epoch_ms: [{ title: 'milliseconds of the timestamp', plan: fromEvents([['m', { op: 'epoch_ms', arg: ts }]]), expect: each((r) => ({ m: ms(r) })) }],
  aggregate: [{
    title: 'count, uniq, sum, avg, min, max, quantile, bit_or, arg_min, arg_max, ordered list',
    plan: { source: { kind: 'events' }, select: [
      ['c', agg('count')], ['u', agg('uniq', col('distinct_id'))], ['cd', agg('count', col('distinct_id'), { distinct: true })],
      ['s', agg('sum', { op: 'to_number', arg: prop('n') })], ['a', agg('avg', { op: 'to_number', arg: prop('n') })],
      ['lo', agg('min', { op: 'to_number', arg: prop('n') })], ['hi', agg('max', { op: 'to_number', arg: prop('n') })],
      ['q', agg('quantile', { op: 'to_number', arg: prop('n') }, { quantile: 0.5 })], ['b', agg('bit_or', { op: 'bit_flag', index: { op: 'floor', arg: { op: 'to_number', arg: prop('n') } } })],
      ['first', agg('arg_min', col('distinct_id'), { by: ts })], ['last', agg('arg_max', col('event'), { by: ts })],
      ['l', agg('list', col('event'), { by: ts })], ['one', agg('any', lit('x'))], ['mo', agg('mode', col('event'))],
    ].map(([alias, expr]) => ({ alias: alias as string, expr: expr as Expr })) },
    expect: [{
      c: ROWS.length, u: 3, cd: 3, s: nums.reduce((a, b) => a + b, 0), a: nums.reduce((a, b) => a + b, 0) / nums.length, lo: Math.min(...nums), hi: Math.max(...nums),
      q: [...nums].sort((a, b) => a - b)[1], b: nums.reduce((w, n) => w | 2 ** Math.floor(n), 0), first: 'u1', last: 'view', l: ROWS.map((r) => r.e), one: 'x', mo: 'view',
    }],
  }],
  binary: [{ title: 'arithmetic and comparisons', plan: fromEvents([['p', { op: 'binary', fn: '+', left: lit(2), right: lit(3) }], ['m', { op: 'binary', fn: '-', left: lit(2), right: lit(3) }], ['t', { op: 'binary', fn: '*', left: lit(2), right: lit(3) }], ['q', { op: 'binary', fn: '/', left: lit(3), right: lit(2) }], ['ne', { op: 'binary', fn: '!=', left: lit('a'), right: lit('b') }], ['le', { op: 'binary', fn: '<=', left: lit(2), right: lit(2) }], ['gt', { op: 'binary', fn: '>', left: lit(1), right: lit(2) }]], { limit: 1 }), expect: [{ p: 5, m: -1, t: 6, q: 1.5, ne: true, le: true, gt: false }] }],
  bit_flag: [{ title: 'one bit', plan: fromEvents([['w', { op: 'bit_flag', index: lit(40) }]], { limit: 1 }), expect: [{ w: 2 ** 40 }] }],
  bits_any: [{ title: 'shared bits', plan: fromEvents([['y', { op: 'bits_any', arg: { op: 'bit_flag', index: lit(3) }, mask: '12' }], ['n', { op: 'bits_any', arg: { op: 'bit_flag', index: lit(1) }, mask: '12' }]], { limit: 1 }), expect: [{ y: true, n: false }] }],
  bits_shift_right: [{ title: 'shifted word', plan: fromEvents([['w', { op: 'bits_shift_right', arg: { op: 'bit_flag', index: lit(10) }, by: lit(4) }]], { limit: 1 }), expect: [{ w: 64 }] }],
  and: [{ title: 'and, empty and', plan: fromEvents([['a', { op: 'and', args: [lit(true), { op: 'binary', fn: '=', left: col('event'), right: lit('buy') }] }], ['e', { op: 'and', args: [] }]]), expect: each((r) => ({ a: r.e === 'buy', e: true })) }],
  or: [{ title: 'or, empty or', plan: fromEvents([['o', { op: 'or', args: [lit(false), { op: 'binary', fn: '=', left: col('distinct_id'), right: lit('u2') }] }], ['e', { op: 'or', args: [] }]]), expect: each((r) => ({ o: r.d === 'u2', e: false })) }],
  not: [{ title: 'negation', plan: fromEvents([['n', { op: 'not', arg: { op: 'binary', fn: '=', left: col('event'), right: lit('buy') } }]]), expect: each((r) => ({ n: r.e !== 'buy' })) }],
  is_null: [{ title: 'absent property', plan: fromEvents([['z', { op: 'is_null', arg: prop('plan') }]]), expect: each((r) => ({ z: r.p.plan === undefined })) }],
  in: [{ title: 'in a list, in an empty list', plan: fromEvents([['i', { op: 'in', arg: col('distinct_id'), values: ['u1', 'u3'] }], ['e', { op: 'in', arg: col('distinct_id'), values: [] }]]), expect: each((r) => ({ i: r.d !== 'u2', e: false })) }],
  case: [{ title: 'first matching branch, else', plan: fromEvents([['c', { op: 'case', when: [[{ op: 'binary', fn: '=', left: col('event'), right: lit('buy') }, lit('B')], [{ op: 'binary', fn: '=', left: col('distinct_id'), right: lit('u2') }, lit('U2')]], else: lit('-') }]]), expect: each((r) => ({ c: r.e === 'buy' ? 'B' : r.d === 'u2' ? 'U2' : '-' })) }],
  coalesce: [{ title: 'first non-NULL', plan: fromEvents([['c', { op: 'coalesce', args: [prop('plan'), lit('none')] }]]), expect: each((r) => ({ c: text(r.p.plan) ?? 'none' })) }],
  concat: [{ title: 'joined, NULL parts left out', plan: fromEvents([['c', { op: 'concat', separator: '::', args: [col('event'), prop('plan'), col('distinct_id')] }]]), expect: each((r) => ({ c: [r.e, text(r.p.plan), r.d].filter((x) => x !== null).join('::') })) }],
  lower: [{ title: 'text lowered', plan: fromEvents([['l', { op: 'lower', arg: prop('plan') }]]), expect: each((r) => ({ l: r.p.plan === undefined ? null : String(r.p.plan).toLowerCase() })) }],
  matches: [{ title: 'a pattern of ours, NULL for NULL', plan: fromEvents([['m', { op: 'matches', arg: prop('plan'), pattern: '^[Pp]r' }]]), expect: each((r) => ({ m: r.p.plan === undefined ? null : /^[Pp]r/.test(String(r.p.plan)) })) }],
  regex_extract: [{ title: 'first group, NULL without a match', plan: fromEvents([['h', { op: 'regex_extract', arg: prop('url'), pattern: '^[a-z]+://([^/]+)' }], ['x', { op: 'regex_extract', arg: col('event'), pattern: '^(zz)' }]]), expect: each((r) => ({ h: r.p.url ? 'a.test' : null, x: null })) }],
  lookup: [{ title: 'constant table by exact text', plan: fromEvents([['t', { op: 'lookup', arg: prop('plan'), table: [['Paying', ['pro', "it's"]], ['Free', ['free']], ['None', []]] }]]), expect: each((r) => ({ t: r.p.plan === 'pro' ? 'Paying' : r.p.plan === 'free' ? 'Free' : null })) }],
  to_text: [{ title: 'numbers as text', plan: fromEvents([['t', { op: 'to_text', arg: lit(42) }]], { limit: 1 }), expect: [{ t: '42' }] }],
  window: [
    { title: 'lag, lead, row_number, dense_rank per person', plan: overEvents([['d', col('distinct_id')], ['prev', { op: 'window', fn: 'lag', arg: col('event'), partitionBy: [col('distinct_id')], orderBy: byTime }], ['next', { op: 'window', fn: 'lead', arg: col('event'), partitionBy: [col('distinct_id')], orderBy: byTime }], ['r', { op: 'window', fn: 'row_number', partitionBy: [col('distinct_id')], orderBy: byTime }], ['dr', { op: 'window', fn: 'dense_rank', partitionBy: [], orderBy: [{ expr: col('distinct_id') }] }]]),
      expect: each((r, i) => { const mine = ROWS.filter((x) => x.d === r.d); const k = mine.indexOf(r); return { d: r.d, prev: mine[k - 1]?.e ?? null, next: mine[k + 1]?.e ?? null, r: k + 1, dr: Number(r.d.slice(1)) } }) },
    { title: 'running count (rows frame) and a range frame excluding the current row', plan: overEvents([['run', { op: 'window', fn: 'count', partitionBy: [], orderBy: byTime, frame: { unit: 'rows', start: 'unbounded', end: 0 } }], ['near', { op: 'window', fn: 'count', partitionBy: [], orderBy: [{ expr: { op: 'epoch_ms', arg: ts } }], frame: { unit: 'range', start: -86_400_000, end: 0, excludeCurrent: true } }]]),
      expect: each((r, i) => ({ run: i + 1, near: ROWS.filter((x, j) => j !== i && ms(x) <= ms(r) && ms(x) >= ms(r) - 86_400_000).length })) },
  ],
  property_filter: [{ title: 'a filter on the event', plan: fromEvents([['d', col('distinct_id')]], { where: { op: 'property_filter', filter: { key: 'plan', operator: 'exact', value: 'PRO', type: 'event' } } }), expect: ROWS.filter((r) => String(r.p.plan ?? '').toLowerCase() === 'pro').map((r) => ({ d: r.d })) }],
  value_filter: [{ title: 'a filter on a computed value (the event name), NULL as absent', plan: fromEvents([['d', col('distinct_id')], ['f', { op: 'value_filter', arg: col('event'), filter: { key: 'x', operator: 'icontains', value: 'UY', type: 'event' } }], ['n', { op: 'value_filter', arg: lit(null), filter: { key: 'x', operator: 'is_not_set', value: null, type: 'event' } }]]), expect: each((r) => ({ d: r.d, f: r.e === 'buy', n: true })) }],
  action: [
    { title: 'an event step', plan: fromEvents([['d', col('distinct_id')]], { where: { op: 'action', steps: [{ event: 'buy' }] } }), expect: ROWS.filter((r) => r.e === 'buy').map((r) => ({ d: r.d })) },
    { title: 'a selector step (elements parsed in SQL)', plan: fromEvents([['d', col('distinct_id')]], { where: { op: 'action', steps: [{ event: 'buy', selector: 'div > button.primary' }] } }), expect: [{ d: 'u3' }] },
  ],
  in_plan: [{ title: 'persons who bought', plan: fromEvents([['d', col('distinct_id')], ['b', { op: 'in_plan', arg: col('distinct_id'), plan: buys }]]), expect: each((r) => ({ d: r.d, b: r.d !== 'u2' })) }],
  regex_match: [{ title: 'an RE2 search', plan: fromEvents([['m', { op: 'regex_match', arg: col('event'), pattern: '^v.e' }]]), expect: each((r) => ({ m: /^v.e/.test(r.e) })) }],
  regex_replace: [{ title: 'every match replaced, with a group', plan: fromEvents([['u', { op: 'regex_replace', arg: { op: 'coalesce', args: [prop('url'), col('event')] }, pattern: '([a-z])\\.', replacement: '<\\1>' }]]), expect: each((r) => ({ u: String(r.p.url ?? r.e).replace(/([a-z])\./g, '<$1>') })) }],
  'source:events': [{ title: 'the project filter', plan: { source: { kind: 'events' }, select: [{ alias: 'c', expr: agg('count') }] }, expect: [{ c: ROWS.length }] }],
  'source:session_partials': [{
    title: 'the partials the event store wrote, merged per session',
    plan: { source: { kind: 'session_partials' }, select: [{ alias: 'id', expr: col('session_id') }, { alias: 's', expr: agg('min', col('min_ms')) }, { alias: 'e', expr: agg('max', col('max_ms')) }, { alias: 'u', expr: agg('arg_max', col('last_distinct_id'), { by: col('max_ms') }) }, { alias: 'n', expr: { op: 'floor', arg: agg('sum', col('screens')) } }], groupBy: [col('session_id')] },
    expect: [{ id: 's3', s: ms(ROWS[4]!), e: ms(ROWS[5]!), u: 'u3', n: 0 }],
  }],
  'source:plan': [{ title: 'a subquery', plan: { source: { kind: 'plan', plan: perPerson }, select: [{ alias: 'd', expr: col('d') }, { alias: 'c', expr: col('c') }], orderBy: [{ expr: col('d') }] }, expect: sorted(counts).map(([d, c]) => ({ d, c })) }],
  'source:spread': [{ title: 'each row three times with k', plan: { source: { kind: 'spread', plan: perPerson, times: 3 }, select: [{ alias: 'd', expr: col('d') }, { alias: 'k', expr: col('k') }], orderBy: [{ expr: col('d') }, { expr: col('k') }] }, expect: sorted(counts).flatMap(([d]) => [0, 1, 2].map((k) => ({ d, k }))) }],
  'source:join': [
    { title: 'inner join on a column', plan: { source: { kind: 'join', left: perPerson, right: buys, using: ['d'] }, select: [{ alias: 'd', expr: col('d') }, { alias: 'c', expr: col('c') }], orderBy: [{ expr: col('d') }] }, expect: ROWS.filter((r) => r.e === 'buy').map((r) => ({ d: r.d, c: counts[r.d] })) },
    { title: 'left join keeps rows without a match', plan: { source: { kind: 'join', left: perPerson, right: { ...buys, select: [{ alias: 'd', expr: col('distinct_id') }, { alias: 'x', expr: lit(1) }] }, using: ['d'], keepLeft: true }, select: [{ alias: 'd', expr: col('d') }, { alias: 'x', expr: col('x') }], orderBy: [{ expr: col('d') }] }, expect: sorted(counts).map(([d]) => ({ d, x: d === 'u2' ? null : 1 })) },
  ],
  'source:sequence': [{
    title: 'per person in time order: position, lag (one row and two), lead, running sum, partition min/max/count, a step reading a step',
    plan: {
      source: {
        kind: 'sequence',
        plan: EVENTS_D_E_T,
        partitionBy: ['d'],
        orderBy: ['t'],
        steps: [
          { alias: 'r', fn: 'row_number' },
          { alias: 'prev', fn: 'lag', arg: col('e') },
          { alias: 'next', fn: 'lead', arg: col('t') },
          { alias: 'prev2', fn: 'lag', arg: col('e'), offset: 2 },
          { alias: 'views', fn: 'running_sum', arg: { op: 'case', when: [[{ op: 'binary', fn: '=', left: col('e'), right: lit('view') }, lit(1)]], else: lit(0) } },
          { alias: 'first_buy', fn: 'partition_min', arg: { op: 'case', when: [[{ op: 'binary', fn: '=', left: col('e'), right: lit('buy') }, col('r')]], else: lit(null) } },
          { alias: 'last_t', fn: 'partition_max', arg: col('t') },
          { alias: 'n', fn: 'partition_count' },
        ],
      },
      select: ['d', 'r', 'prev', 'next', 'prev2', 'views', 'first_buy', 'last_t', 'n'].map((a) => ({ alias: a, expr: col(a) })),
      orderBy: [{ expr: col('d') }, { expr: col('r') }],
    },
    expect: [...ROWS].sort((a, b) => a.d.localeCompare(b.d) || ms(a) - ms(b)).map((r) => {
      const mine = ROWS.filter((x) => x.d === r.d).sort((a, b) => ms(a) - ms(b))
      const k = mine.indexOf(r)
      const buy = mine.findIndex((x) => x.e === 'buy')
      return { d: r.d, r: k + 1, prev: mine[k - 1]?.e ?? null, next: mine[k + 1] ? ms(mine[k + 1]!) : null, prev2: mine[k - 2]?.e ?? null, views: mine.slice(0, k + 1).filter((x) => x.e === 'view').length, first_buy: buy < 0 ? null : buy + 1, last_t: ms(mine[mine.length - 1]!), n: mine.length }
    }),
  }, {
    title: 'one partition in time order: a filter (the steps after it see the kept rows only), runs, values of the row',
    plan: {
      source: {
        kind: 'sequence',
        plan: EVENTS_D_E_T,
        partitionBy: [],
        orderBy: ['t'],
        steps: [
          { alias: 'nxt', fn: 'lead', arg: col('e') },
          // Drops an event followed by one of the same name (u2's first view).
          { alias: 'kept', fn: 'filter', arg: { op: 'or', args: [{ op: 'is_null', arg: col('nxt') }, { op: 'binary', fn: '!=', left: col('e'), right: col('nxt') }] } },
          { alias: 'prev', fn: 'lag', arg: col('e') },
          { alias: 'run', fn: 'run_position', arg: { op: 'binary', fn: '=', left: col('e'), right: lit('buy') }, upTo: 2 },
          { alias: 'long', fn: 'run_position', arg: lit(false), upTo: 3 },
          { alias: 'twice', fn: 'map', arg: { op: 'binary', fn: '*', left: col('long'), right: lit(2) } },
        ],
      },
      select: ['d', 'e', 'prev', 'run', 'long', 'twice'].map((a) => ({ alias: a, expr: col(a) })),
      orderBy: [{ expr: col('t') }],
    },
    expect: (() => {
      const all = [...ROWS].sort((a, b) => ms(a) - ms(b))
      const kept = all.filter((r, i) => all[i + 1]?.e !== r.e)
      let run = 0
      return kept.map((r, k) => {
        run = k > 0 && kept[k - 1]!.e === 'buy' ? 1 : run + 1
        const long = k + 1 <= 3 ? k + 1 : null
        return { d: r.d, e: r.e, prev: kept[k - 1]?.e ?? null, run: run <= 2 ? run : null, long, twice: long === null ? null : long * 2 }
      })
      })(),
    }, {
    title: 'max_before: the greatest value of the rows before and of the peers (same day), the row itself and NULLs left out',
    plan: {
      source: {
        kind: 'sequence',
        plan: {
          source: { kind: 'events' },
          select: [
            { alias: 'd', expr: col('distinct_id') },
            { alias: 'day', expr: { op: 'floor', arg: { op: 'binary', fn: '/', left: { op: 'epoch_ms', arg: ts }, right: lit(86_400_000) } } },
            { alias: 'v', expr: { op: 'case', when: [[{ op: 'binary', fn: '=', left: col('event'), right: lit('view') }, { op: 'epoch_ms', arg: ts }]], else: lit(null) } },
          ],
        },
        partitionBy: [],
        orderBy: ['day'],
        steps: [{ alias: 'm', fn: 'max_before', arg: col('v') }],
      },
      select: ['d', 'm'].map((a) => ({ alias: a, expr: col(a) })),
      orderBy: [{ expr: col('d') }, { expr: col('m') }],
    },
    expect: (() => {
      const day = (r: Row) => Math.floor(ms(r) / 86_400_000)
      const v = (r: Row) => (r.e === 'view' ? ms(r) : null)
      const rows = ROWS.map((r) => {
        const seen = ROWS.filter((x) => x !== r && day(x) <= day(r)).map(v).filter((x): x is number => x !== null)
        return { d: r.d, m: seen.length ? Math.max(...seen) : null }
      })
      // NULLs last, as both engines order them ascending.
      return rows.sort((a, b) => a.d.localeCompare(b.d) || Number(a.m === null) - Number(b.m === null) || (a.m ?? 0) - (b.m ?? 0))
    })(),
  }, {
    title: 'prune: the steps before it see every row, the steps after it and the reader the same answer whether its rows are dropped or not',
    plan: {
      source: {
        kind: 'sequence',
        plan: EVENTS_D_E_T,
        partitionBy: [],
        orderBy: ['t'],
        steps: [
          { alias: 'view_before', fn: 'max_before', arg: { op: 'case', when: [[isView, col('t')]], else: lit(null) } },
          // Views may go: only buys are read after it.
          { alias: 'buys', fn: 'prune', arg: { op: 'not', arg: isView } },
          { alias: 'buy_before', fn: 'max_before', arg: { op: 'case', when: [[{ op: 'not', arg: isView }, col('t')]], else: lit(null) } },
        ],
      },
      select: ['d', 'view_before', 'buy_before'].map((a) => ({ alias: a, expr: col(a) })),
      where: { op: 'not', arg: isView },
      orderBy: [{ expr: col('t') }],
    },
    expect: (() => {
      const before = (r: Row, e: string) => {
        const seen = ROWS.filter((x) => x.e === e && ms(x) < ms(r)).map(ms)
        return seen.length ? Math.max(...seen) : null
      }
      return [...ROWS].sort((a, b) => ms(a) - ms(b)).filter((r) => r.e !== 'view').map((r) => ({ d: r.d, view_before: before(r, 'view'), buy_before: before(r, 'buy') }))
    })(),
  }],
  shared_plan: [{ title: 'one plan read on both sides of a join', plan: { source: { kind: 'join', left: perPerson, right: perPerson, using: ['d', 'c'] }, select: [{ alias: 'd', expr: col('d') }], orderBy: [{ expr: col('d') }] }, expect: sorted(counts).map(([d]) => ({ d })) }],
  group_order_limit: [{
    title: 'group by a selected expression, having, order by it descending, limit and offset',
    plan: { source: { kind: 'events' }, select: [{ alias: 'e', expr: col('event') }, { alias: 'c', expr: agg('count') }], groupBy: [col('event')], having: { op: 'binary', fn: '>', left: agg('count'), right: lit(0) }, orderBy: [{ expr: col('event'), desc: true }], limit: 1, offset: 1 },
    expect: [{ e: 'buy', c: ROWS.filter((r) => r.e === 'buy').length }],
  }],
}
