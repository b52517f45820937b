import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { elementsToString } from '../../domain/events/elements-to-string.ts'
import { insertTestEvents, openTestEventsDb, type TestEventRow } from '../../../test/helpers/action-events.ts'
import { createDuckDbActionQueries } from './duckdb-action-queries.ts'

async function queriesOver(t: TestContext, rows: TestEventRow[]) {
  const db = await openTestEventsDb()
  t.after(() => db.close())
  await insertTestEvents(db, rows)
  return { db, queries: createDuckDbActionQueries(db.connection) }
}

const at = (iso: string): Date => new Date(iso)

test('countActionMatches counts the matching events of the project in [after, before)', async (t) => {
  const { queries } = await queriesOver(t, [
    { event: 'signup', properties: {}, timestamp: at('2026-01-01T00:00:00Z') },
    { event: 'signup', properties: {}, timestamp: at('2026-01-02T00:00:00Z') },
    { event: 'signup', properties: {}, timestamp: at('2026-01-03T00:00:00Z') },
    { event: 'login', properties: {}, timestamp: at('2026-01-02T00:00:00Z') },
    { event: 'signup', properties: {}, projectId: 2, timestamp: at('2026-01-02T00:00:00Z') },
  ])
  const steps = [{ event: 'signup' }]
  assert.equal(await queries.countActionMatches(1, steps), 3)
  assert.equal(await queries.countActionMatches(2, steps), 1)
  assert.equal(await queries.countActionMatches(1, steps, { after: at('2026-01-02T00:00:00Z') }), 2)
  assert.equal(await queries.countActionMatches(1, steps, { after: at('2026-01-02T00:00:00Z'), before: at('2026-01-03T00:00:00Z') }), 1)
})

test('steps on different events (one branch each) count every matching event once, with the range and project applied to each', async (t) => {
  const chain = elementsToString([{ tag_name: 'button', attr_class: ['buy'], text: 'Buy' }, { tag_name: 'div', attr_class: ['shop'] }])
  const { queries } = await queriesOver(t, [
    { event: '$pageview', properties: { $current_url: 'https://a.com/pricing' }, timestamp: at('2026-01-02T00:00:00Z') },
    { event: '$pageview', properties: { $current_url: 'https://a.com/pricing?x' }, timestamp: at('2026-01-01T00:00:00Z') },
    { event: '$pageview', properties: { $current_url: 'https://a.com/' }, timestamp: at('2026-01-02T00:00:00Z') },
    { event: '$autocapture', properties: { $current_url: 'https://a.com/pricing' }, elementsChain: chain, timestamp: at('2026-01-02T00:00:00Z') },
    { event: 'purchase', properties: {}, timestamp: at('2026-01-02T00:00:00Z') },
    { event: 'purchase', properties: {}, projectId: 2, timestamp: at('2026-01-02T00:00:00Z') },
  ])
  const steps = [
    { event: '$pageview', url: '/pricing', url_matching: 'contains' },
    { event: 'purchase' },
    { event: '$autocapture', selector: 'div.shop > button.buy' },
    { event: '$pageview', url: 'https://a.com/pricing', url_matching: 'exact' }, // same rows as the first step
    { event: '$autocapture', text: 'Buy' },
  ]
  assert.equal(await queries.countActionMatches(1, steps), 4)
  assert.equal(await queries.countActionMatches(1, steps, { after: at('2026-01-02T00:00:00Z') }), 3)
  assert.equal(await queries.countActionMatches(2, steps), 1)
})

test('an action without steps counts nothing', async (t) => {
  const { queries } = await queriesOver(t, [{ event: 'x', properties: {} }])
  assert.equal(await queries.countActionMatches(1, []), 0)
})

test('actionPersons pages through the effective persons that performed the action, merges resolved, sorted', async (t) => {
  const rows: TestEventRow[] = ['c', 'a', 'b', 'a', 'd', 'a2'].map((d) => ({ event: 'signup', distinctId: d, properties: {} }))
  rows.push({ event: 'login', distinctId: 'e', properties: {} })
  const { db, queries } = await queriesOver(t, rows)
  // Each distinct id stored under a person of its own; a2's person was merged into a's afterwards.
  const person = (d: string) => `00000000-0000-4000-8000-0000000000${'abcde'.indexOf(d[0]!) + 1}${d.length}`
  for (const d of ['a', 'b', 'c', 'd', 'e', 'a2']) {
    await db.connection.run('UPDATE events SET person_id = $1::UUID WHERE distinct_id = $2', [person(d), d])
  }
  await db.connection.run('INSERT INTO person_overrides VALUES (1, $1::UUID, $2::UUID, 0)', [person('a2'), person('a')])
  const steps = [{ event: 'signup' }]
  const expected = ['a', 'b', 'c', 'd'].map(person)
  assert.deepEqual(await queries.actionPersons(1, steps, { limit: 3, offset: 0 }), { personIds: expected.slice(0, 3), hasMore: true })
  assert.deepEqual(await queries.actionPersons(1, steps, { limit: 3, offset: 3 }), { personIds: expected.slice(3), hasMore: false })
})

test('a catastrophic url regex against a 10,000-character url answers in SQL', async (t) => {
  const { queries } = await queriesOver(t, [
    { event: '$pageview', properties: { $current_url: `${'a'.repeat(10_000)}!` } },
    { event: '$pageview', properties: { $current_url: 'a'.repeat(10_000) } },
  ])
  assert.equal(await queries.countActionMatches(1, [{ url: '^(a+)+$', url_matching: 'regex' }]), 1)
})

test('a catastrophic text regex and property regex against 10,000 characters answer in SQL', async (t) => {
  const long = `${'a'.repeat(10_000)}!`
  const { queries } = await queriesOver(t, [
    { event: '$autocapture', properties: { q: long }, elementsChain: elementsToString([{ tag_name: 'a', text: long }]) },
  ])
  assert.equal(await queries.countActionMatches(1, [{ text: '^(a+)+$', text_matching: 'regex' }]), 0)
  assert.equal(await queries.countActionMatches(1, [{ properties: [{ key: 'q', operator: 'regex', value: '^(a+)+$', type: 'event' }] }]), 0)
  assert.equal(await queries.countActionMatches(1, [{ properties: [{ key: 'q', operator: 'not_regex', value: '^(a+)+$', type: 'event' }] }]), 1)
})

test('an invalid regex matches nothing instead of failing the query', async (t) => {
  const { queries } = await queriesOver(t, [{ event: '$pageview', properties: { $current_url: 'https://a.com' } }])
  assert.equal(await queries.countActionMatches(1, [{ url: '(', url_matching: 'regex' }]), 0)
  assert.equal(await queries.countActionMatches(1, [{ url: 'a(?=b)', url_matching: 'regex' }]), 0)
})

test('a named group written (?<name>...) works, as in the pure matcher', async (t) => {
  const { queries } = await queriesOver(t, [{ event: '$pageview', properties: { $current_url: 'https://a.com' } }])
  assert.equal(await queries.countActionMatches(1, [{ url: '(?<host>a\\.com)', url_matching: 'regex' }]), 1)
})

test('user text is bound, never spliced into the SQL', async (t) => {
  const nasty = `x'; DROP TABLE events; --`
  const { db, queries } = await queriesOver(t, [{ event: nasty, properties: { [nasty]: nasty, $current_url: nasty } }])
  assert.equal(await queries.countActionMatches(1, [{ event: nasty, url: nasty, properties: [{ key: nasty, value: nasty, type: 'event' }] }]), 1)
  assert.equal(await queries.countActionMatches(1, [{ selector: `[data-x='${nasty}']` }]), 0)
  const rows = (await db.connection.runAndReadAll('SELECT count(*) AS n FROM events')).getRowObjects()
  assert.equal(Number(rows[0].n), 1)
})

test('date and version operators compile to SQL (date-semver-sql-agreement.int.test.ts checks their answers)', async (t) => {
  const { queries } = await queriesOver(t, [{ event: 'x', properties: { d: '2025-12-01', v: '1.10.0' } }, { event: 'x', properties: { d: '2026-02-01', v: '1.9.0' } }])
  assert.equal(await queries.countActionMatches(1, [{ properties: [{ key: 'd', operator: 'is_date_before', value: '2026-01-01', type: 'event' }] }]), 1)
  assert.equal(await queries.countActionMatches(1, [{ properties: [{ key: 'v', operator: 'semver_gt', value: '1.9.5', type: 'event' }] }]), 1)
})

test('a stored filter that is not an object with a key matches nothing in SQL', async (t) => {
  const { queries } = await queriesOver(t, [{ event: 'x', properties: {} }])
  assert.equal(await queries.countActionMatches(1, [{ properties: [null, 'x', { value: 1 }] as unknown as [] }]), 0)
})
