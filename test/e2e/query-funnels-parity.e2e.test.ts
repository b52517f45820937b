import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { funnelQuery, postQuery, queryOk, seededApps, type TestEvent } from '../helpers/query-data.ts'

// Funnel answers as PostHog gives them (posthog/hogql_queries/insights/funnels: FunnelUnordered's
// step names, FunnelMathType first-time steps, breakdowns given as a list). A small hand-written data
// set; every count below is read off it.
const t = (day: string, hour: number) => `2024-03-${day}T${String(hour).padStart(2, '0')}:00:00Z`
const events: TestEvent[] = [
  // early: signed up once before the range (the first time ever), again in it, then bought.
  { event: 'signup', distinct_id: 'early', timestamp: t('01', 9), properties: { $browser: 'Chrome', plan: 'free' } },
  { event: 'signup', distinct_id: 'early', timestamp: t('05', 9), properties: { $browser: 'Chrome', plan: 'pro' } },
  { event: 'buy', distinct_id: 'early', timestamp: t('05', 10), properties: { $browser: 'Chrome' } },
  // fresh: first signup in the range, then bought.
  { event: 'signup', distinct_id: 'fresh', timestamp: t('06', 9), properties: { $browser: 'Firefox', plan: 'pro' } },
  { event: 'buy', distinct_id: 'fresh', timestamp: t('06', 11), properties: { $browser: 'Firefox' } },
  // backwards: bought first, signed up after (an unordered funnel completes, an ordered one does not).
  { event: 'buy', distinct_id: 'backwards', timestamp: t('07', 9), properties: { $browser: 'Chrome' } },
  { event: 'signup', distinct_id: 'backwards', timestamp: t('07', 10), properties: { $browser: 'Chrome', plan: 'free' } },
]
// PostHog's test_advanced_funnel_multiple_exclusions_between_steps (test_funnel_unordered.py), its
// five persons on 2021-05-01 (hour:minute), exclusions x and y over the whole five-step funnel.
const MULTI_STEPS = ['user signed up', '$pageview', 'insight viewed', 'invite teammate', 'pageview2']
const journeys: Record<string, Array<[string, string]>> = {
  person1: [['user signed up', '01:00'], ['x', '02:00'], ['$pageview', '03:00'], ['insight viewed', '04:00'], ['y', '04:30'], ['invite teammate', '05:00'], ['pageview2', '06:00']],
  person2: [['user signed up', '01:00'], ['y', '01:30'], ['$pageview', '02:00'], ['insight viewed', '04:00'], ['y', '04:30'], ['invite teammate', '05:00'], ['x', '05:30'], ['pageview2', '06:00']],
  person3: [['user signed up', '01:00'], ['x', '01:30'], ['$pageview', '02:00'], ['insight viewed', '04:00'], ['invite teammate', '05:00'], ['x', '05:30'], ['pageview2', '06:00']],
  person4: [['user signed up', '01:00'], ['$pageview', '02:00'], ['insight viewed', '04:00'], ['invite teammate', '05:00'], ['pageview2', '06:00']],
  person5: [['user signed up', '01:00'], ['x', '01:30'], ['$pageview', '02:00'], ['x', '02:30'], ['insight viewed', '04:00'], ['y', '04:30'], ['invite teammate', '05:00'], ['x', '05:30'], ['pageview2', '06:00']],
}
for (const [person, steps] of Object.entries(journeys)) {
  for (const [event, time] of steps) events.push({ event, distinct_id: person, timestamp: `2021-05-01T${time}:00Z` })
}
// The query's own properties filter every event the funnel reads (PostHog's FunnelEventQuery), in April:
// gp1's exclusion and gp3's other event are on mobile, gp2's exclusion on web.
const g = (hour: number, minute: number) => `2024-04-02T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00Z`
const webOnly = [{ key: 'app', value: 'web', operator: 'exact', type: 'event' }]
events.push(
  { event: 'gstart', distinct_id: 'gp1', timestamp: g(10, 0), properties: { app: 'web' } },
  { event: 'gx', distinct_id: 'gp1', timestamp: g(10, 30), properties: { app: 'mobile' } },
  { event: 'gend', distinct_id: 'gp1', timestamp: g(11, 0), properties: { app: 'web' } },
  { event: 'gstart', distinct_id: 'gp2', timestamp: g(10, 0), properties: { app: 'web' } },
  { event: 'gx', distinct_id: 'gp2', timestamp: g(10, 30), properties: { app: 'web' } },
  { event: 'gend', distinct_id: 'gp2', timestamp: g(11, 0), properties: { app: 'web' } },
  { event: 'gstart', distinct_id: 'gp3', timestamp: g(12, 0), properties: { app: 'web' } },
  { event: 'gother', distinct_id: 'gp3', timestamp: g(12, 10), properties: { app: 'mobile' } },
  { event: 'gend', distinct_id: 'gp3', timestamp: g(12, 20), properties: { app: 'web' } },
)
const dateRange = { date_from: '2024-03-04', date_to: '2024-03-10' }
const STEPS = ['signup', 'buy']
const counts = (steps: Array<{ count: number }>) => steps.map((s) => s.count)

const seeded = seededApps(events)

testOnEachEngine('a breakdown given as a list (["$browser"], PostHog\'s own conversion) answers as the property alone', async (_t, engine) => {
  const asList = await queryOk(seeded.app(engine), funnelQuery(STEPS, dateRange, { breakdownFilter: { breakdown: ['$browser'], breakdown_type: 'event' } }))
  const asText = await queryOk(seeded.app(engine), funnelQuery(STEPS, dateRange, { breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } }))
  assert.deepEqual(asList.results, asText.results)
  const byValue = new Map(asList.results.map((steps: Array<{ breakdown_value: string[]; count: number }>) => [JSON.stringify(steps[0]!.breakdown_value), counts(steps)]))
  assert.deepEqual(byValue, new Map([['["Chrome"]', [2, 1]], ['["Firefox"]', [1, 1]]]))

  const twoProps = await queryOk(seeded.app(engine), funnelQuery(STEPS, dateRange, { breakdownFilter: { breakdown: ['$browser', 'plan'], breakdown_type: 'event' } }))
  const values = twoProps.results.map((steps: Array<{ breakdown_value: string[] }>) => JSON.stringify(steps[0]!.breakdown_value)).sort()
  // First touch: backwards' first funnel event is a buy, which has no plan.
  assert.deepEqual(values, ['["Chrome","$$_posthog_breakdown_null_$$"]', '["Chrome","pro"]', '["Firefox","pro"]'])
})

testOnEachEngine('math first_time_for_user: only the actor\'s first event ever of the step does it; _with_filters: the first matching the filters', async (_t, engine) => {
  const plain = await queryOk(seeded.app(engine), funnelQuery(STEPS, dateRange))
  assert.deepEqual(counts(plain.results), [3, 2])

  const first = await queryOk(seeded.app(engine), { ...funnelQuery(STEPS, dateRange), series: [{ kind: 'EventsNode', event: 'signup', math: 'first_time_for_user' }, { kind: 'EventsNode', event: 'buy' }] })
  // early's first signup ever is before the range: they are not in the funnel.
  assert.deepEqual(counts(first.results), [2, 1])

  const pro = [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }]
  const firstPro = await queryOk(seeded.app(engine), { ...funnelQuery(STEPS, dateRange), series: [{ kind: 'EventsNode', event: 'signup', math: 'first_time_for_user', properties: pro }, { kind: 'EventsNode', event: 'buy' }] })
  assert.deepEqual(counts(firstPro.results), [1, 1], 'the first signup ever, and it must be a pro one: fresh only')
  const firstProWithFilters = await queryOk(seeded.app(engine), { ...funnelQuery(STEPS, dateRange), series: [{ kind: 'EventsNode', event: 'signup', math: 'first_time_for_user_with_filters', properties: pro }, { kind: 'EventsNode', event: 'buy' }] })
  assert.deepEqual(counts(firstProWithFilters.results), [2, 2], 'the first pro signup ever: early\'s is in the range')

  const bad = await postQuery(seeded.app(engine), { ...funnelQuery(STEPS, dateRange), series: [{ kind: 'EventsNode', event: 'signup', math: 'first_time_ever' }, { kind: 'EventsNode', event: 'buy' }] })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().attr, 'query.series.0.math')
})

testOnEachEngine('unordered funnels name their steps "Completed 1 step", "Completed 2 steps" with action_id null', async (_t, engine) => {
  const body = await queryOk(seeded.app(engine), funnelQuery(STEPS, dateRange, {}, { funnelOrderType: 'unordered' }))
  assert.deepEqual(body.results.map((s: Record<string, unknown>) => [s.name, s.action_id, s.custom_name, s.order, s.count]), [
    ['Completed 1 step', null, null, 0, 3],
    ['Completed 2 steps', null, null, 1, 3],
  ])
  const ordered = await queryOk(seeded.app(engine), funnelQuery(STEPS, dateRange))
  assert.deepEqual(ordered.results.map((s: Record<string, unknown>) => [s.name, s.action_id]), [['signup', 'signup'], ['buy', 'buy']])

  const byBrowser = await queryOk(seeded.app(engine), funnelQuery(STEPS, dateRange, { breakdownFilter: { breakdown: '$browser' } }, { funnelOrderType: 'unordered' }))
  for (const steps of byBrowser.results) assert.deepEqual(steps.map((s: Record<string, unknown>) => s.name), ['Completed 1 step', 'Completed 2 steps'])
})

testOnEachEngine('an unordered funnel with several exclusions leaves persons out only from the steps after an excluded event (PostHog\'s own case)', async (_t, engine) => {
  const exclusions = ['x', 'y'].map((event) => ({ kind: 'EventsNode', event, funnelFromStep: 0, funnelToStep: 4 }))
  const body = await queryOk(seeded.app(engine), funnelQuery(MULTI_STEPS, { date_from: '2021-05-01 00:00:00', date_to: '2021-05-14 00:00:00' }, {}, { funnelOrderType: 'unordered', funnelWindowInterval: 14, exclusions }))
  assert.equal(body.results[0].name, 'Completed 1 step')
  assert.deepEqual(counts(body.results), [5, 2, 1, 1, 1])
})

testOnEachEngine('the query\'s properties filter every event the funnel reads: an exclusion or a strict funnel\'s other event they leave out does not count', async (_t, engine) => {
  const april = { date_from: '2024-04-01', date_to: '2024-04-07' }
  const exclusions = [{ kind: 'EventsNode', event: 'gx', funnelFromStep: 0, funnelToStep: 1 }]
  // gp1's exclusion is on mobile: not read, gp1 converts; gp2's is on web: gp2 is excluded.
  const excluded = await queryOk(seeded.app(engine), funnelQuery(['gstart', 'gend'], april, { properties: webOnly }, { exclusions }))
  assert.deepEqual(counts(excluded.results), [2, 2])
  // Strict: gp1's and gp3's mobile events are not read, so they do not break the sequence; gp2's web gx does.
  const strict = await queryOk(seeded.app(engine), funnelQuery(['gstart', 'gend'], april, { properties: webOnly }, { funnelOrderType: 'strict' }))
  assert.deepEqual(counts(strict.results), [3, 2])
  // Without the filter every event is read: both exclusions count, and every other event breaks the strict funnel.
  assert.deepEqual(counts((await queryOk(seeded.app(engine), funnelQuery(['gstart', 'gend'], april, {}, { exclusions }))).results), [1, 1])
  assert.deepEqual(counts((await queryOk(seeded.app(engine), funnelQuery(['gstart', 'gend'], april, {}, { funnelOrderType: 'strict' }))).results), [3, 0])
})
