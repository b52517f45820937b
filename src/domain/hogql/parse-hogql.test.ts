import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AppError } from '../../shared/errors.ts'
import { parseHogQL } from './parse-hogql.ts'
import { columnName, printSelect } from './print-hogql.ts'

// Accepted: each query and its normalised text (precedence made explicit by the printer's parentheses).
const ACCEPTED: Array<[string, string]> = [
  ['select event, count() from events group by event', 'SELECT event, count() FROM events GROUP BY event'],
  ['SELECT DISTINCT distinct_id FROM events', 'SELECT DISTINCT distinct_id FROM events'],
  ['select count(*) c from events e', 'SELECT count() AS c FROM events AS e'],
  ['select properties.$browser, properties[\'$os\'], e.properties.a.b from events as e', "SELECT properties.$browser, properties.$os, e.properties.a.b FROM events AS e"],
  ["select properties['my key'] from events", 'SELECT properties.`my key` FROM events'],
  ['select person.properties.email, person_id, $group_0, elements_chain from events', 'SELECT person.properties.email, person_id, $group_0, elements_chain FROM events'],
  ['select 1 + 2 * 3 - -4', 'SELECT (1 + (2 * 3)) - -4'],
  ['select a or b and not c = 1 from events', 'SELECT a OR (b AND (NOT (c = 1))) FROM events'],
  ['select 1 from events where event in (\'a\', \'b\') and event not in (\'c\') and distinct_id not like \'x%\' and event ilike \'%A\'',
    "SELECT 1 FROM events WHERE (event IN ('a', 'b')) AND (event NOT IN 'c') AND (distinct_id NOT LIKE 'x%') AND (event ILIKE '%A')"],
  ['select 1 from events where timestamp between \'2024-01-01\' and now() and properties.x is not null', "SELECT 1 FROM events WHERE (timestamp BETWEEN '2024-01-01' AND now()) AND (properties.x IS NOT NULL)"],
  ['select 1 from events where timestamp > now() - interval 7 day', 'SELECT 1 FROM events WHERE timestamp > (now() - INTERVAL 7 day)'],
  ["select 1 from events where timestamp > now() - interval '2 weeks'", 'SELECT 1 FROM events WHERE timestamp > (now() - INTERVAL 2 week)'],
  ['select case when event = \'a\' then 1 when event = \'b\' then 2 else 0 end from events', "SELECT CASE WHEN event = 'a' THEN 1 WHEN event = 'b' THEN 2 ELSE 0 END FROM events"],
  ['select case event when \'a\' then 1 end from events', "SELECT CASE event WHEN 'a' THEN 1 END FROM events"],
  ['select quantile(0.9)(toFloat(properties.load)), median(1), countIf(event = \'x\') from events', "SELECT quantile(0.9)(toFloat(properties.load)), median(1), countIf(event = 'x') FROM events"],
  ['select COUNT(DISTINCT person_id), Sum(1) from events', 'SELECT count(DISTINCT person_id), sum(1) FROM events'],
  ['select toStartOfDay(timestamp) as d, count() from events group by d order by d desc limit 10 offset 5', 'SELECT toStartOfDay(timestamp) AS d, count() FROM events GROUP BY d ORDER BY d DESC LIMIT 10 OFFSET 5'],
  ['select 1 from events limit 5, 10', 'SELECT 1 FROM events LIMIT 10 OFFSET 5'],
  ['select c from (select distinct_id, count() as c from events group by distinct_id) as t where c > 1', 'SELECT c FROM (SELECT distinct_id, count() AS c FROM events GROUP BY distinct_id) AS t WHERE c > 1'],
  ['select e.event from events e left outer join (select distinct_id from events) s on e.distinct_id = s.distinct_id inner join events x on x.uuid = e.uuid',
    'SELECT e.event FROM events AS e LEFT JOIN (SELECT distinct_id FROM events) AS s ON e.distinct_id = s.distinct_id INNER JOIN events AS x ON x.uuid = e.uuid'],
  ['select 1 from events where distinct_id in (select distinct_id from events where event = \'x\')', "SELECT 1 FROM events WHERE distinct_id IN (SELECT distinct_id FROM events WHERE event = 'x')"],
  ['select e.* , `weird name` from events e;', 'SELECT e.*, `weird name` FROM events AS e'],
  ['-- comment\nselect /* inline */ \'it\'\'s\', \'a\\\'b\' from events', "SELECT 'it\\'s', 'a\\'b' FROM events"],
  ['select {ev}, {n} from events where event = {ev}', "SELECT '$pageview', 3 FROM events WHERE event = '$pageview'"],
  ['select true, false, null, 1.5e3, 0x10', 'SELECT true, false, NULL, 1500, 16'],
]

const REFUSED: Array<[string, RegExp]> = [
  ['', /Only SELECT queries are allowed, found an empty query/],
  ['DROP TABLE events', /Only SELECT queries are allowed, found "DROP"/],
  ['insert into events values (1)', /Only SELECT queries are allowed, found "insert"/],
  ["ATTACH 'x.db'", /found "ATTACH"/],
  ['copy events to \'/tmp/x\'', /found "copy"/],
  ['SET threads = 1', /found "SET"/],
  ['PRAGMA version', /found "PRAGMA"/],
  ['with x as (select 1) select * from x', /WITH \(common table expressions\) is not supported/],
  ['select 1; select 2', /Only one statement is allowed/],
  ['select 1; drop table events', /Only one statement is allowed/],
  ['select 1 settings readonly = 0', /SETTINGS clauses are not allowed/],
  ['select 1 from events format JSON', /FORMAT clauses are not allowed/],
  ['select 1 union all select 2', /UNION is not supported/],
  ['select * from system.tables', /Unknown table "system.tables"/],
  ['select * from information_schema.columns', /Unknown table "information_schema.columns"/],
  ['select * from duckdb_settings()', /Table functions are not allowed \("duckdb_settings/],
  ["select * from read_parquet('x.parquet')", /Table functions are not allowed \("read_parquet/],
  ["select * from 'file.csv'", /Reading files is not allowed \('file.csv'\)/],
  ['select * from events, events', /Only \[INNER\] JOIN and LEFT \[OUTER\] JOIN/],
  ['select * from events e cross join events f', /Only \[INNER\] JOIN/],
  ['select * from events e join events f using (uuid)', /JOIN \.\.\. USING is not supported/],
  ["select read_csv('/etc/passwd')", /Unsupported function "read_csv"/],
  ['select current_setting(\'threads\')', /Unsupported function "current_setting"/],
  ['select count(1, 2) from events', /Function "count" takes 0 to 1 argument\(s\), got 2/],
  ['select quantile(x) from events', /Function "quantile" takes 1 parameter\(s\) first/],
  ['select uniq(DISTINCT x) from events', /DISTINCT is not supported inside "uniq\(\)"/],
  ['select row_number() over () from events', /Unsupported function "row_number"/],
  ['select count() over () from events', /Window functions \(OVER\) are not supported/],
  ['select event::int from events', /Casts with "::" are not supported/],
  ['select 1 from events where', /Expected an expression, found the end of the query/],
  ['select 1 from events limit -1', /LIMIT takes a whole number/],
  ["select 'open", /Unterminated string/],
  ['select {missing}', /Placeholder \{missing\} has no value/],
  ['select 1 from events order by 1 nulls first', /NULLS FIRST\/LAST is not supported/],
  ['select #', /Unexpected character "#"/],
]

test('parseHogQL: accepted queries, normalised', () => {
  for (const [query, printed] of ACCEPTED) {
    assert.equal(printSelect(parseHogQL(query, { ev: '$pageview', n: 3 })), printed, query)
  }
})

test('parseHogQL: refused queries name what was refused (a 400 on query.query)', () => {
  for (const [query, detail] of REFUSED) {
    assert.throws(() => parseHogQL(query), (err: unknown) => {
      assert.ok(err instanceof AppError, query)
      assert.equal(err.code, 'validation_error', query)
      assert.equal(err.attr, 'query.query', query)
      assert.match(err.message, detail, `${query}: ${err.message}`)
      return true
    })
  }
})

test('parseHogQL: the tree of a grouped query with a join', () => {
  const q = parseHogQL("select e.event as name, count() from events e left join events f on e.uuid = f.uuid where f.event = 'x' group by name having count() > 1")
  assert.deepEqual(q.from, { kind: 'table', name: 'events', alias: 'e' })
  assert.equal(q.joins[0]!.type, 'left')
  assert.deepEqual(q.select.map(columnName), ['name', 'count()'])
  assert.deepEqual(q.where, { kind: 'compare', op: '=', left: { kind: 'field', chain: ['f', 'event'] }, right: { kind: 'constant', value: 'x' } })
  assert.deepEqual(q.groupBy, [{ kind: 'field', chain: ['name'] }])
  assert.equal(q.having?.kind, 'compare')
})

test('parseHogQL: placeholders take only scalar values, deep nesting is bounded', () => {
  assert.throws(() => parseHogQL('select {x}', { x: { a: 1 } }), /must be a string, number, boolean or null/)
  assert.throws(() => parseHogQL(`select ${'('.repeat(500)}1${')'.repeat(500)}`), /nested too deeply/)
  assert.throws(() => parseHogQL(`select 1 ${' '.repeat(100_001)}`), /longer than 100000 characters/)
})
