import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MIGRATIONS } from '../../app/create-adapters.ts'
import { anEvent } from '../../../test/contracts/builders.ts'
import { clickHouseStatement, freshClickHouseUrl, skipWithoutClickHouse } from '../../../test/helpers/clickhouse.ts'
import { MATERIALIZED_PROPERTIES, NONSTRING_KEYS } from '../duckdb/materialized-properties.ts'
import { createClickHouseEventStore } from './clickhouse-event-store.ts'
import { eventRowsText } from './clickhouse-event-rows.ts'
import { openClickHouse } from './open-clickhouse.ts'

// The events' rows are written from the properties' JSON text without parsing it. What ClickHouse
// stores must be what a parse gives: each top-level key with json_extract_string's text of its value
// (a string's text, any other value's JSON), null-valued keys apart, the mat_* columns and their
// non-string bits, the person's arrays the same, lone surrogates as U+FFFD.

const LONE = '\ud800'
const wellFormed = (s: string) => (s as unknown as { toWellFormed(): string }).toWellFormed()
const PROPERTIES: Array<Record<string, unknown>> = [
  {},
  { $current_url: 'https://x/?q="quoted"&b=\\back', $pathname: '/p', $host: 'h', $browser: 'Chrome', $os: 'Mac', $device_type: 'Desktop', $referring_domain: 'r', $lib: 'web', $session_id: 's' },
  { $current_url: 5, $browser: true, $os: null, $lib: { nested: ['a', 1, null, { deep: '"}' }] }, $host: [1, '2'] },
  { n: 0, neg: -1.5, big: 1e21, small: 1e-7, t: true, f: false, z: null, arr: [], obj: {}, s: '' },
  { 'key "with" quotes': 'v', 'back\\slash': '\\', 'new\nline': 'tab\there', ctl: '\u0001\u001f', uni: 'ümlaut 😀 中文', __proto__key: 1 },
  { [`lone${LONE}key`]: `lone ${LONE} value`, pair: '😀', nested: { s: `x${LONE}` }, escaped: '\\ud800 is text' },
  JSON.parse('{"__proto__":{"a":1},"b":2}') as Record<string, unknown>,
]

/** What a parse of `text` says the row holds: [keys, values, null keys, string-valued]. */
function parsedColumns(text: string) {
  const keys: string[] = []
  const values: string[] = []
  const nullKeys: string[] = []
  const isString: boolean[] = []
  for (const [k, v] of Object.entries(JSON.parse(text) as Record<string, unknown>)) {
    if (v === null) {
      nullKeys.push(wellFormed(k))
      continue
    }
    keys.push(wellFormed(k))
    values.push(wellFormed(typeof v === 'string' ? v : JSON.stringify(v)))
    isString.push(typeof v === 'string')
  }
  return { keys, values, nullKeys, isString }
}

test('event rows written from the properties text without a parse hold what a parse gives, on ClickHouse', { skip: skipWithoutClickHouse() }, async (t) => {
  const ch = await openClickHouse(await freshClickHouseUrl(), MIGRATIONS.clickhouse)
  t.after(async () => {
    await ch.close()
    await clickHouseStatement(`DROP DATABASE IF EXISTS \`${ch.database}\``)
  })
  const store = await createClickHouseEventStore(ch)
  const events = PROPERTIES.map((p, i) => anEvent({
    distinctId: `d${i}`, event: i === 5 ? `ev${LONE}` : 'e', properties: JSON.stringify(p),
    personProperties: i === 0 ? null : JSON.stringify(PROPERTIES[(i + 3) % PROPERTIES.length]), groups: i === 2 ? [null, 'g1', null, null, null] : undefined,
  }))
  // Not JSON.stringify's text (white space): parsed, with the same result.
  events.push(anEvent({ distinctId: 'spaced', properties: '{ "a" : "x" , "b" : [ 1 ] }', personProperties: '{}' }))
  assert.deepEqual(await store.insertBatch(events), { inserted: events.length })

  const mat = [...MATERIALIZED_PROPERTIES].map(([, column]) => column)
  const rows = await ch.query<Record<string, unknown>>(
    `SELECT distinct_id, event, properties, prop_keys, prop_values, prop_null_keys, person_prop_keys, person_prop_values, person_prop_null_keys,
       group_1, ${mat.join(', ')}, mat_nonstring FROM events`,
  )
  assert.equal(rows.length, events.length)
  for (const e of events) {
    const row = rows.find((r) => r.distinct_id === e.distinctId)!
    const props = parsedColumns(e.properties)
    const person = parsedColumns(e.personProperties ?? '{}')
    const what = e.properties
    assert.equal(row.properties, e.properties, what)
    assert.equal(row.event, wellFormed(e.event), what)
    assert.deepEqual([row.prop_keys, row.prop_values, row.prop_null_keys], [props.keys, props.values, props.nullKeys], what)
    assert.deepEqual([row.person_prop_keys, row.person_prop_values, row.person_prop_null_keys], [person.keys, person.values, person.nullKeys], what)
    let bits = 0
    ;[...MATERIALIZED_PROPERTIES.keys()].forEach((key, i) => {
      const at = props.keys.indexOf(key)
      assert.equal(row[mat[i]!], at < 0 ? null : props.values[at], `${mat[i]} of ${what}`)
      if (at >= 0 && !props.isString[at] && i < NONSTRING_KEYS) bits |= 1 << i
    })
    assert.equal(row.mat_nonstring, bits, what)
    assert.equal(row.group_1, e.groups?.[1] ?? null)
  }
})

test('event rows: one JSON object a line', () => {
  const text = eventRowsText([anEvent({ properties: '{"a":"x"}' }), anEvent({ properties: '{"b":1,"ü":"😀"}' })]).toString('utf8')
  const lines = text.split('\n')
  assert.equal(lines.pop(), '')
  assert.deepEqual(lines.map((l) => (JSON.parse(l) as { prop_keys: string[] }).prop_keys), [['a'], ['b', 'ü']])
})
