import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { type TestApp } from '../helpers/test-app.ts'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { privateApi } from '../helpers/private-api.ts'
import { postQuery, queryOk, seededRandom, type TestEvent, seededApps } from '../helpers/query-data.ts'

// Persons with pageviews and purchases over the last 80 days, relative to the real clock (behavioural
// windows end at the query's now). Every event sits 0.1-0.9 of a day past a whole day of age, so no
// window edge (whole days back from a now a few seconds later) is ever close to one. Expectations are
// computed below from these histories in plain JavaScript.
const NOW = Date.now()
const DAY = 86_400_000
const rand = seededRandom(2024)
const dayAge = (whole: number) => whole + 0.1 + rand() * 0.8

interface History {
  person: string
  plan: 'pro' | 'free'
  /** Event times (epoch ms). */
  pageviews: number[]
  purchases: Array<{ at: number; amount: number }>
}

const atAge = (age: number) => NOW - Math.round(age * DAY)
const history = (person: string, plan: History['plan'], pageviewAges: number[], purchaseAges: number[]): History => ({
  person,
  plan,
  pageviews: pageviewAges.map(atAge),
  purchases: purchaseAges.map((a) => ({ at: atAge(a), amount: 1 + Math.floor(rand() * 100) })),
})

const histories: History[] = []
for (let p = 0; p < 36; p++) {
  const pageviewAges = Array.from({ length: 2 + Math.floor(rand() * 6) }, () => dayAge(Math.floor(rand() * 80)))
  // Weekly activity at a per-person rate: regular, lapsed, restarted and new buyers all occur.
  const rate = rand() * 0.8
  const purchaseAges: number[] = []
  for (let week = 0; week < 11; week++) {
    if (rand() >= rate) continue
    for (let k = 1 + Math.floor(rand() * 3); k > 0; k--) purchaseAges.push(dayAge(week * 7 + Math.floor(rand() * 7)))
  }
  histories.push(history(`user-${p}`, p % 3 === 0 ? 'pro' : 'free', pageviewAges, purchaseAges))
}
// Hand-made histories so that every criterion has members whatever the random ones do.
histories.push(
  history('stopper', 'pro', [dayAge(2), dayAge(30)], [dayAge(20), dayAge(35), dayAge(50)]),
  history('restarter', 'free', [dayAge(1), dayAge(40), dayAge(41)], [dayAge(45), dayAge(3)]),
  history('newbie', 'pro', [dayAge(11), dayAge(12), dayAge(2)], [dayAge(10), dayAge(2)]),
  history('regular', 'free', [dayAge(0), dayAge(9)], [dayAge(0), dayAge(8), dayAge(15), dayAge(22)]),
  history('browser', 'free', [dayAge(3), dayAge(33), dayAge(60)], []),
)
// The sequence (pageview, then purchase within a day) for one, too slow for the other.
const seqStart = atAge(5.6)
histories.push({ person: 'quick', plan: 'pro', pageviews: [seqStart], purchases: [{ at: seqStart + 6 * 3_600_000, amount: 10 }] })
histories.push({ person: 'slow', plan: 'free', pageviews: [seqStart], purchases: [{ at: seqStart + 2 * DAY, amount: 10 }] })

// user-0..4 browse as anon-N until they identify 40 days ago (also once under their own id before):
// two persons merged after the fact, so criteria must read persons through the override table.
const MERGED = new Set(['user-0', 'user-1', 'user-2', 'user-3', 'user-4'])
const IDENTIFIED_AT = atAge(40.5)
const distinctIdOf = (h: History, at: number) => (MERGED.has(h.person) && at < IDENTIFIED_AT ? h.person.replace('user-', 'anon-') : h.person)
const events: TestEvent[] = []
for (const h of histories) {
  const $set = { plan: h.plan }
  for (const at of h.pageviews) events.push({ event: '$pageview', distinct_id: distinctIdOf(h, at), timestamp: new Date(at).toISOString(), properties: { $set } })
  for (const p of h.purchases) events.push({ event: 'purchase', distinct_id: distinctIdOf(h, p.at), timestamp: new Date(p.at).toISOString(), properties: { amount: p.amount, $set } })
  if (MERGED.has(h.person)) {
    events.push({ event: '$pageview', distinct_id: h.person, timestamp: new Date(atAge(45.5)).toISOString(), properties: { $set } })
    h.pageviews.push(atAge(45.5))
    events.push({ event: '$identify', distinct_id: h.person, timestamp: new Date(IDENTIFIED_AT).toISOString(), properties: { $anon_distinct_id: h.person.replace('user-', 'anon-'), $set } })
  }
}
events.sort((a, b) => a.timestamp.localeCompare(b.timestamp))

// The criteria's meaning, in ages (days before now) of each person's events.
const age = (at: number) => (NOW - at) / DAY
const purchaseAges = (h: History, filter: (p: { amount: number }) => boolean = () => true) => h.purchases.filter(filter).map((p) => age(p.at))
const within = (ages: number[], from: number, to = 0) => ages.filter((a) => a < from && a >= to).length
const isRegular = (h: History) => [0, 1, 2, 3].filter((p) => within(purchaseAges(h), 7 * (p + 1), 7 * p) >= 1).length >= 3
const isSequence = (h: History) => h.pageviews.some((v) => age(v) < 30 && h.purchases.some((p) => p.at > v && p.at - v <= DAY && age(p.at) < 30))

/** Pageviews of the persons `qualifies` picks: what a TrendsQuery over $pageview filtered by the cohort counts. */
const pageviewsOf = (qualifies: (h: History) => boolean) => histories.filter(qualifies).reduce((n, h) => n + h.pageviews.length, 0)

let app: TestApp
let bigPurchaseAction: number
const seeded = seededApps(events)
const actionIds = new Map<Engine, number>()
/** The app of the engine, with the "Big purchase" action created there once. */
async function useEngine(engine: Engine): Promise<void> {
  app = seeded.app(engine)
  if (!actionIds.has(engine)) {
    const action = await privateApi(app).post('/actions/', { name: 'Big purchase', steps: [{ event: 'purchase', properties: [{ key: 'amount', value: 50, operator: 'gt', type: 'event' }] }] })
    assert.equal(action.statusCode, 201, action.body)
    actionIds.set(engine, action.json().id)
  }
  bigPurchaseAction = actionIds.get(engine)!
}

const behavioral = (value: string, fields: Record<string, unknown>) => ({ type: 'behavioral', value, key: 'purchase', event_type: 'events', ...fields })

async function cohortOf(values: unknown[], type: 'AND' | 'OR' = 'AND'): Promise<number> {
  const res = await privateApi(app).post('/cohorts/', { name: 'behavioural', filters: { properties: { type: 'OR', values: [{ type, values }] } } })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

function pageviewsByCohort(id: number) {
  return postQuery(app, { kind: 'TrendsQuery', dateRange: { date_from: '-90d' }, interval: 'week', series: [{ kind: 'EventsNode', event: '$pageview' }], properties: [{ key: 'id', value: id, type: 'cohort' }] })
}

async function assertCounts(values: unknown[], qualifies: (h: History) => boolean, type: 'AND' | 'OR' = 'AND') {
  const expected = pageviewsOf(qualifies)
  assert.ok(expected > 0 && expected < pageviewsOf(() => true), 'the criterion splits the persons')
  const res = await pageviewsByCohort(await cohortOf(values, type))
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.json().results[0].count, expected)
}

testOnEachEngine('without a cohort filter the query counts every pageview (the data set is stored)', async (_t, engine) => {
  await useEngine(engine)
  const body = await queryOk(app, { kind: 'TrendsQuery', dateRange: { date_from: '-90d' }, interval: 'week', series: [{ kind: 'EventsNode', event: '$pageview' }] })
  assert.equal(body.results[0].count, pageviewsOf(() => true))
})

testOnEachEngine('performed_event counts the persons with the event in the last 14 days, merged persons as one', async (_t, engine) => {
  await useEngine(engine)
  await assertCounts([behavioral('performed_event', { time_value: 14, time_interval: 'day' })], (h) => within(purchaseAges(h), 14) > 0)
})

testOnEachEngine('performed_event of an action, and of an event narrowed by event_filters, in the last 4 weeks', async (_t, engine) => {
  await useEngine(engine)
  const big = (h: History) => within(purchaseAges(h, (p) => p.amount > 50), 28) > 0
  await assertCounts([behavioral('performed_event', { event_type: 'actions', key: bigPurchaseAction, time_value: 4, time_interval: 'week' })], big)
  await assertCounts([behavioral('performed_event', { time_value: 4, time_interval: 'week', event_filters: [{ key: 'amount', value: 50, operator: 'gt', type: 'event' }] })], big)
})

testOnEachEngine('performed_event_multiple compares the count in the window with operator and operator_value', async (_t, engine) => {
  await useEngine(engine)
  await assertCounts([behavioral('performed_event_multiple', { operator: 'gte', operator_value: 3, time_value: 30, time_interval: 'day' })], (h) => within(purchaseAges(h), 30) >= 3)
  // Persons without the event are not counted by "at most" (PostHog groups the events of the window).
  await assertCounts([behavioral('performed_event_multiple', { operator: 'lte', operator_value: 2, time_value: 30, time_interval: 'day' })], (h) => {
    const n = within(purchaseAges(h), 30)
    return n >= 1 && n <= 2
  })
  await assertCounts([behavioral('performed_event_multiple', { operator: 'exact', operator_value: 2, time_value: 30, time_interval: 'day' })], (h) => within(purchaseAges(h), 30) === 2)
})

testOnEachEngine('performed_event_first_time keeps the persons whose first event falls in the window', async (_t, engine) => {
  await useEngine(engine)
  await assertCounts([behavioral('performed_event_first_time', { time_value: 21, time_interval: 'day' })], (h) => h.purchases.length > 0 && Math.max(...purchaseAges(h)) < 21)
})

testOnEachEngine('stopped_performing_event: done in the last 60 days but not in the last 14', async (_t, engine) => {
  await useEngine(engine)
  await assertCounts([behavioral('stopped_performing_event', { time_value: 60, time_interval: 'day', seq_time_value: 14, seq_time_interval: 'day' })], (h) => {
    const ages = purchaseAges(h)
    return within(ages, 60, 14) > 0 && within(ages, 14) === 0
  })
})

testOnEachEngine('restarted_performing_event: done before 30 days ago, not from 30 to 7 days ago, again in the last 7', async (_t, engine) => {
  await useEngine(engine)
  await assertCounts([behavioral('restarted_performing_event', { time_value: 30, time_interval: 'day', seq_time_value: 7, seq_time_interval: 'day' })], (h) => {
    const ages = purchaseAges(h)
    return ages.some((a) => a >= 30) && within(ages, 30, 7) === 0 && within(ages, 7) > 0
  })
})

testOnEachEngine('performed_event_regularly: at least once a week in at least 3 of the last 4 weeks', async (_t, engine) => {
  await useEngine(engine)
  await assertCounts([behavioral('performed_event_regularly', { operator: 'gte', operator_value: 1, time_value: 1, time_interval: 'week', min_periods: 3, total_periods: 4 })], isRegular)
})

testOnEachEngine('performed_event_sequence: a pageview, then a purchase within a day, in the last 30 days', async (_t, engine) => {
  await useEngine(engine)
  assert.ok(isSequence(histories.find((h) => h.person === 'quick')!) && !isSequence(histories.find((h) => h.person === 'slow')!))
  await assertCounts([behavioral('performed_event_sequence', { key: '$pageview', time_value: 30, time_interval: 'day', seq_event: 'purchase', seq_event_type: 'events', seq_time_value: 1, seq_time_interval: 'day' })], isSequence)
})

testOnEachEngine('a negated criterion counts the persons who did not do it, those who never did included', async (_t, engine) => {
  await useEngine(engine)
  await assertCounts([behavioral('performed_event', { time_value: 14, time_interval: 'day', negation: true })], (h) => within(purchaseAges(h), 14) === 0)
})

testOnEachEngine('behavioural and person-property criteria combine in AND and OR groups', async (_t, engine) => {
  await useEngine(engine)
  const recent = (h: History) => within(purchaseAges(h), 14) > 0
  const pro = { key: 'plan', value: 'pro', operator: 'exact', type: 'person' }
  await assertCounts([pro, behavioral('performed_event', { time_value: 14, time_interval: 'day' })], (h) => h.plan === 'pro' && recent(h))
  await assertCounts([pro, behavioral('performed_event', { time_value: 14, time_interval: 'day' })], (h) => h.plan === 'pro' || recent(h), 'OR')
  await assertCounts([pro, behavioral('performed_event', { time_value: 14, time_interval: 'day', negation: true })], (h) => h.plan === 'pro' && !recent(h))
})

testOnEachEngine('a cohort naming a behavioural cohort, and a negated cohort filter, read the same membership', async (_t, engine) => {
  await useEngine(engine)
  const inner = await cohortOf([behavioral('performed_event', { time_value: 14, time_interval: 'day' })])
  const outer = await cohortOf([{ key: 'id', value: inner, type: 'cohort' }])
  const res = await pageviewsByCohort(outer)
  assert.equal(res.json().results[0].count, pageviewsOf((h) => within(purchaseAges(h), 14) > 0))
  const negated = await postQuery(app, { kind: 'TrendsQuery', dateRange: { date_from: '-90d' }, series: [{ kind: 'EventsNode', event: '$pageview' }], properties: [{ key: 'id', value: inner, type: 'cohort', operator: 'not_in' }] })
  assert.equal(negated.json().results[0].count, pageviewsOf((h) => within(purchaseAges(h), 14) === 0))
})

testOnEachEngine('a behavioural criterion whose event filters name a cohort reads that cohort too', async (_t, engine) => {
  await useEngine(engine)
  const pro = await cohortOf([{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }])
  await assertCounts(
    [behavioral('performed_event', { time_value: 14, time_interval: 'day', event_filters: [{ key: 'id', value: pro, type: 'cohort' }] })],
    (h) => h.plan === 'pro' && within(purchaseAges(h), 14) > 0,
  )
})

testOnEachEngine('bad behavioural criteria: refused when saved, or a 400 naming the filter when queried', async (_t, engine) => {
  await useEngine(engine)
  const api = privateApi(app)
  const unknown = await api.post('/cohorts/', { name: 'x', filters: { properties: { type: 'AND', values: [behavioral('performed_event_daily', {})] } } })
  assert.equal(unknown.statusCode, 400, unknown.body)
  const id = await cohortOf([behavioral('performed_event_multiple', { operator: 'gte', time_value: 7, time_interval: 'day' })])
  const res = await pageviewsByCohort(id)
  assert.equal(res.statusCode, 400, res.body)
  assert.equal(res.json().attr, 'query.properties.0')
  assert.match(res.json().detail, /operator_value/)
  const stale = await cohortOf([behavioral('performed_event', { event_type: 'actions', key: 987654, time_value: 7, time_interval: 'day' })])
  assert.equal((await pageviewsByCohort(stale)).statusCode, 400)
})

testOnEachEngine('feature flags still refuse cohorts with behavioural criteria', async (_t, engine) => {
  await useEngine(engine)
  const id = await cohortOf([behavioral('performed_event', { time_value: 14, time_interval: 'day' })])
  const res = await privateApi(app).post('/feature_flags/', { key: 'buyers', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: id }], rollout_percentage: 100 }] } })
  assert.equal(res.statusCode, 400, res.body)
  assert.equal(res.json().code, 'behavioral_cohort_found')
})
