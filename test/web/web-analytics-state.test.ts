import assert from 'node:assert/strict'
import { test } from 'node:test'
import { overviewQuery, readState, statsTableQuery, toggleFilter, writeState, DEFAULT_STATE } from '../../web/src/web-analytics/web-filters.ts'
import { readStatsTable } from '../../web/src/web-analytics/stats-rows.ts'
import { rowFilter, TABS } from '../../web/src/web-analytics/breakdowns.ts'
import { summariseSession } from '../../web/src/web-analytics/session-summary.ts'
import { GOAL_TABS, goalTrendQuery } from '../../web/src/web-analytics/goal-trends.ts'

// The Web analytics page's pure parts (web/src/web-analytics); the page itself is tested in Chromium
// against a real Tally (test/e2e/web-analytics-page.e2e.test.ts).

const exact = (key: string, ...value: string[]) => ({ key, type: 'event' as const, operator: 'exact' as const, value })

test('the page state survives the address bar: date range, compare, test accounts and filters', () => {
  const s = { dateFrom: '-30d', compare: false, filterTestAccounts: true, filters: [exact('$pathname', '/a b&c', '/d'), { key: '$os', type: 'event' as const, operator: 'is_not_set' as const, value: [] }], goal: null }
  assert.deepEqual(readState(writeState(s)), s)
  assert.equal(writeState(DEFAULT_STATE), '', 'the default state is the bare address')
})

test('the conversion goal survives the address bar and goes into the overview and table queries', () => {
  for (const goal of [{ actionId: 12 }, { customEventName: 'signed up: pro & more' }]) {
    const s = { ...DEFAULT_STATE, goal }
    assert.deepEqual(readState(writeState(s)).goal, goal)
    assert.deepEqual(overviewQuery(s).conversionGoal, goal)
    assert.deepEqual(statsTableQuery(s, 'Page').conversionGoal, goal)
  }
  assert.equal(overviewQuery(DEFAULT_STATE).conversionGoal, undefined)
  assert.equal(statsTableQuery(DEFAULT_STATE, 'Page').conversionGoal, undefined)
  for (const bad of ['action:x', 'event:', 'other:1', '']) assert.equal(readState(`?goal=${encodeURIComponent(bad)}`).goal, null, bad)
})

test('with a goal the trend has PostHog\'s conversion tabs: unique, total, the rate as A / B of unique visitors, visitors', () => {
  assert.deepEqual(GOAL_TABS.map((t) => t.label), ['Unique conversions', 'Total conversions', 'Conversion rate', 'Visitors'])
  const s = { ...DEFAULT_STATE, filters: [exact('$browser', 'Chrome'), { key: '$channel_type', type: 'session' as const, operator: 'exact' as const, value: ['Direct'] }] }
  const seriesOf = (q: Record<string, unknown>) => (q.series as Array<Record<string, unknown>>).map((n) => [n.kind, n.id ?? n.event, n.math])
  assert.deepEqual(seriesOf(goalTrendQuery(s, { actionId: 7 }, 'unique_conversions')), [['ActionsNode', 7, 'dau']])
  assert.deepEqual(seriesOf(goalTrendQuery(s, { customEventName: 'purchase' }, 'total_conversions')), [['EventsNode', 'purchase', 'total']])
  const rate = goalTrendQuery(s, { customEventName: 'purchase' }, 'conversion_rate')
  assert.deepEqual(seriesOf(rate), [['EventsNode', 'purchase', 'dau'], ['EventsNode', '$pageview', 'dau']])
  assert.equal((rate.trendsFilter as { formula?: string }).formula, 'A / B')
  // The trend takes the event filters, not the session ones (a TrendsQuery has none).
  assert.deepEqual((rate.properties as Array<{ key: string }>).map((p) => p.key), ['$browser'])
  assert.deepEqual(seriesOf(goalTrendQuery(s, { actionId: 7 }, 'visitors')), [['EventsNode', '$pageview', 'dau']])
})

test('an unreadable address falls back to the defaults, keeping only well-formed filters', () => {
  const s = readState('?date_from=-999d&filters=' + encodeURIComponent(JSON.stringify([exact('x', 'y'), { ...exact('z'), value: [1] }, { ...exact('k', 'v'), type: 'bogus' }, exact('empty'), { ...exact('o', 'v'), operator: 'gt' }])))
  assert.equal(s.dateFrom, DEFAULT_STATE.dateFrom)
  assert.deepEqual(s.filters, [exact('x', 'y')])
  assert.deepEqual(readState('?filters=%7Bnot-json').filters, [])
})

test('clicking rows toggles as PostHog does: values of one property add up, a second click removes one', () => {
  const once = toggleFilter(DEFAULT_STATE, exact('$browser', 'Chrome'))
  assert.deepEqual(once.filters, [exact('$browser', 'Chrome')])
  const both = toggleFilter(once, exact('$browser', 'Safari'))
  assert.deepEqual(both.filters, [exact('$browser', 'Chrome', 'Safari')], 'either browser')
  assert.deepEqual(toggleFilter(both, exact('$browser', 'Safari')).filters, [exact('$browser', 'Safari')], 'among several, the clicked one stays alone')
  assert.deepEqual(toggleFilter(once, exact('$browser', 'Chrome')).filters, [])
  const unset = { key: '$browser', type: 'event' as const, operator: 'is_not_set' as const, value: [] }
  assert.deepEqual(toggleFilter(toggleFilter(once, unset), unset).filters, once.filters, 'the row without a value toggles is_not_set')
})

test('a stats table query carries the filters as PostHog property filters, with compare and test accounts', () => {
  let s = toggleFilter({ ...DEFAULT_STATE, filterTestAccounts: true }, { key: '$entry_pathname', type: 'session', operator: 'exact', value: ['/'] })
  s = toggleFilter(s, exact('$browser', 'Chrome'))
  s = toggleFilter(s, exact('$browser', 'Safari'))
  s = toggleFilter(s, { key: '$os', type: 'event', operator: 'is_not_set', value: [] })
  assert.deepEqual(statsTableQuery(s, 'Page'), {
    kind: 'WebStatsTableQuery', breakdownBy: 'Page', dateRange: { date_from: '-7d', date_to: null }, includeBounceRate: true, limit: 10,
    properties: [
      { key: '$entry_pathname', value: '/', operator: 'exact', type: 'session' },
      { key: '$browser', value: ['Chrome', 'Safari'], operator: 'exact', type: 'event' },
      { key: '$os', operator: 'is_not_set', type: 'event' },
    ],
    filterTestAccounts: true, compareFilter: { compare: true },
  })
})

test('stats rows are read by column name, with [current, previous] pairs or plain numbers', () => {
  const paired = readStatsTable({
    columns: ['context.columns.breakdown_value', 'context.columns.visitors', 'context.columns.views', 'context.columns.bounce_rate'],
    results: [['/pricing', [2, 1], [3, 1], [0.5, null]]],
  })
  assert.deepEqual(paired.rows, [{ value: '/pricing', visitors: { current: 2, previous: 1 }, views: { current: 3, previous: 1 }, bounceRate: { current: 0.5, previous: null }, goal: null, fill: null }])
  assert.equal(paired.hasBounceRate, true)
  // Columns in another order, without a bounce rate.
  const plain = readStatsTable({ columns: ['context.columns.views', 'context.columns.breakdown_value', 'context.columns.visitors'], results: [[7, 'Desktop', 2]] })
  assert.deepEqual(plain.rows[0], { value: 'Desktop', visitors: { current: 2, previous: null }, views: { current: 7, previous: null }, bounceRate: null, goal: null, fill: null })
  assert.equal(plain.hasBounceRate, false)
  // With a conversion goal: PostHog's conversion columns, and the server's fill fraction.
  const goal = readStatsTable({
    columns: ['context.columns.breakdown_value', 'context.columns.visitors', 'context.columns.total_conversions', 'context.columns.unique_conversions', 'context.columns.conversion_rate', 'context.columns.ui_fill_fraction', 'context.columns.cross_sell'],
    results: [['/pricing', [2, 1], [3, 0], [1, 0], [0.5, 0], 0.25, '']],
  })
  assert.equal(goal.hasGoal, true)
  assert.equal(goal.hasBounceRate, false)
  assert.deepEqual(goal.rows[0]!.goal, { total: { current: 3, previous: 0 }, unique: { current: 1, previous: 0 }, rate: { current: 0.5, previous: 0 } })
  assert.equal(goal.rows[0]!.fill, 0.25)
  assert.equal(plain.hasGoal, false)
})

test('a row filters on its value: the tuple element the property holds, a language whatever its region, none as not set', () => {
  assert.deepEqual(rowFilter(TABS.get('city')!, ['GB', 'London']), { key: '$geoip_city_name', type: 'event', operator: 'exact', value: ['London'] })
  assert.deepEqual(rowFilter(TABS.get('entry')!, '/'), { key: '$entry_pathname', type: 'session', operator: 'exact', value: ['/'] })
  assert.deepEqual(rowFilter(TABS.get('browser')!, null), { key: '$browser', type: 'event', operator: 'is_not_set', value: [] })
  const language = rowFilter(TABS.get('language')!, 'en-US')
  assert.equal(language.operator, 'regex')
  const re = new RegExp(language.value[0]!)
  assert.deepEqual(['en', 'en-GB', 'en-US', 'eng', 'fr-en'].map((l) => re.test(l)), [true, true, true, false, false])
})

test('a session runs from its first to its last event; entry and exit are its first and last URL', () => {
  const at = (s: number, event: string, url?: string) => ({ uuid: `${s}`, event, distinct_id: 'd', timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString(), properties: url ? { $current_url: url } : {} })
  const s = summariseSession([at(0, '$pageview', 'https://a/'), at(30, '$autocapture', 'https://a/'), at(95, '$pageview', 'https://a/x'), at(100, 'server event')])
  assert.equal(s.durationSeconds, 100)
  assert.equal(s.entryUrl, 'https://a/')
  assert.equal(s.exitUrl, 'https://a/x', 'the last event with a URL, not the last event')
  assert.equal(s.pageviews, 2)
  assert.equal(s.autocaptures, 1)
})
