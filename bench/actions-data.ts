// The data set of bench/actions.ts, generated inside the stores (no event passes through
// JavaScript): events into DuckDB with range() and INSERT ... SELECT, persons into PGlite with
// generate_series. Deterministic (hash of the row number), so two runs scan the same rows.
import type { DuckDBConnection } from '@duckdb/node-api'
import type { SqlClient } from '../src/storage/sql/sql-client.ts'
import { fillMaterializedSql } from '../src/storage/duckdb/materialized-properties.ts'

export interface DataSet {
  events: number
  persons: number
  days: number
}

/** A person's uuid in both stores: md5 of a name, read as a uuid by DuckDB and PostgreSQL alike. */
const personUuid = (p: string) => `md5('bench-person-' || ${p})::UUID`
const anonUuid = (p: string) => `md5('bench-anon-' || ${p})::UUID`

const PATHS = ['/', '/pricing', '/features', '/about', '/blog', '/checkout', '/cart', '/account/settings', '/docs/getting-started', '/signup']
const CUSTOM = ['signed up', 'purchase', 'added to cart', 'search', 'checkout started', 'plan upgraded']
const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge', 'Opera']
const OSES = ['Windows', 'Mac OS X', 'Linux', 'iOS', 'Android']

/**
 * Elements chains of clicks as posthog-js sends them (clicked element first). Only the first has
 * `button.primary` as a direct child of `div.shop`; three have an element with the text `Buy now`.
 */
export const CHAINS = [
  'button.btn.primary:attr__class="btn primary"attr__id="buy"nth-child="2"nth-of-type="1"text="Buy now";div.shop:attr__class="shop"nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
  'button.btn.secondary:attr__class="btn secondary"nth-child="3"nth-of-type="2"text="Add to cart";div.shop:attr__class="shop"nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
  'a.nav-link:attr__class="nav-link"attr__href="/pricing"href="/pricing"nth-child="1"nth-of-type="1"text="Pricing";li:nth-child="2"nth-of-type="2";ul.nav:attr__class="nav"nth-child="1"nth-of-type="1";nav:nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
  'span:nth-child="1"nth-of-type="1"text="Buy now";button.btn.primary:attr__class="btn primary"nth-child="1"nth-of-type="1";div.hero:attr__class="hero"nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
  'input.search:attr__class="search"attr__name="q"attr__type="text"nth-child="1"nth-of-type="1";form:attr__id="search"nth-child="2"nth-of-type="1";header:nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
  'a:attr__href="/blog/post-12"href="/blog/post-12"nth-child="3"nth-of-type="3"text="Read more";article.post:attr__class="post"nth-child="4"nth-of-type="4";main:nth-child="2"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
  'button.primary:attr__class="primary"nth-child="1"nth-of-type="1"text="Buy now";div.modal:attr__class="modal"nth-child="5"nth-of-type="3";body:nth-child="2"nth-of-type="1"',
  'div.card:attr__class="card"nth-child="2"nth-of-type="2";div.shop:attr__class="shop"nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
]

const list = (xs: readonly string[]) => `[${xs.map((x) => `'${x.replace(/'/g, "''")}'`).join(', ')}]`
/** One of `xs`, picked by a hash of the row number and a salt. */
const pick = (xs: readonly string[], salt: string) => `${list(xs)}[1 + (hash(i, '${salt}') % ${xs.length})::INTEGER]`

/**
 * Loads `set.events` events of project `projectId` into DuckDB's `events` table, in chunks of a
 * million rows: 45 % `$pageview` (with `$current_url`; a tenth on `/products/<n>`), 30 %
 * `$autocapture` (a click, one of `CHAINS`), 10 % `$pageleave`, 15 % custom events; persons skewed
 * (a few are very active), timestamps uniform over the last `set.days` days. One person in ten also
 * sent personless events under an anonymous distinct id before being identified: those events carry
 * the anonymous person id and `person_overrides` points it at the person.
 */
export async function loadEvents(duck: DuckDBConnection, projectId: number, set: DataSet, now: Date): Promise<void> {
  const chunk = 1_000_000
  const seconds = set.days * 86_400
  const path = `CASE WHEN hash(i, 'prod') % 10 = 0 THEN '/products/' || (hash(i, 'pid') % 500) ELSE ${pick(PATHS, 'path')} END`
  for (let start = 0; start < set.events; start += chunk) {
    const end = Math.min(set.events, start + chunk)
    await duck.run(`INSERT INTO events (uuid, project_id, event, distinct_id, properties, elements_chain, timestamp, created_at, person_id, person_properties)
      SELECT uuid(), ${projectId}, event, CASE WHEN anon THEN 'anon-' || p ELSE 'user-' || p END,
        '{' || CASE
          WHEN event = '$autocapture' THEN '"$event_type":"click",'
          WHEN event IN ('$pageview', '$pageleave') THEN '"$pathname":"' || path || '","$referring_domain":"$direct",'
          ELSE '"plan":"' || ${pick(['free', 'pro', 'team'], 'plan')} || '","amount":' || (hash(i, 'amt') % 500) || ','
        END || '"$current_url":"https://shop.example.com' || path || '","$host":"shop.example.com","$browser":"' || ${pick(BROWSERS, 'br')}
        || '","$os":"' || ${pick(OSES, 'os')} || '","$lib":"web","$lib_version":"1.449.2","$screen_width":' || (1024 + hash(i, 'w') % 1024)
        || ',"$session_id":"' || md5('s' || p || (hash(i, 'ts') % ${seconds} // 3600)) || '"'
        || CASE WHEN anon THEN ',"$process_person_profile":false' ELSE '' END || '}',
        CASE WHEN event = '$autocapture' THEN ${pick(CHAINS, 'chain')} ELSE '' END,
        ts, ts,
        CASE WHEN anon THEN ${anonUuid('p')} ELSE ${personUuid('p')} END,
        CASE WHEN anon THEN '{}' ELSE '{"email":"user-' || p || '@example.com","plan":"free"}' END
      FROM (
        SELECT i, path, p, p % 10 = 0 AND hash(i, 'anon') % 10 < 3 AS anon,
          CASE WHEN k < 45 THEN '$pageview' WHEN k < 75 THEN '$autocapture' WHEN k < 85 THEN '$pageleave'
               ELSE ${pick(CUSTOM, 'ev')} END AS event,
          to_timestamp(${Math.floor(now.getTime() / 1000)} - (hash(i, 'ts') % ${seconds})::BIGINT) AS ts
        FROM (SELECT i, hash(i, 'k') % 100 AS k, ${path} AS path,
                ((hash(i, 'p') % 1000000000) / 1000000000.0) AS u,
                floor(${set.persons} * u * u)::BIGINT AS p
              FROM range(${start}, ${end}) t(i))
      )`)
  }
  // As the event store would have: the materialized property columns.
  await duck.run(fillMaterializedSql(`project_id = ${projectId}`))
  await duck.run(`INSERT INTO person_overrides (project_id, old_person_id, override_person_id)
    SELECT ${projectId}, ${anonUuid('p')}, ${personUuid('p')} FROM range(0, ${set.persons}, 10) t(p)`)
}

/** The persons of the events in the metadata store (identified, an email each), with their distinct ids. */
export async function loadPersons(meta: SqlClient, projectId: number, set: DataSet): Promise<void> {
  await meta.query(
    `INSERT INTO persons (uuid, project_id, properties, is_identified, created_at)
     SELECT md5('bench-person-' || g)::uuid, $1, jsonb_build_object('email', 'user-' || g || '@example.com', 'plan', 'free'), true, now()
     FROM generate_series(0, $2::int - 1) g`,
    [projectId, set.persons],
  )
  await meta.query(
    `INSERT INTO person_distinct_ids (project_id, distinct_id, person_id)
     SELECT $1, v.d, p.id FROM generate_series(0, $2::int - 1) g
       JOIN persons p ON p.uuid = md5('bench-person-' || g)::uuid,
       LATERAL (VALUES ('user-' || g), (CASE WHEN g % 10 = 0 THEN 'anon-' || g END)) v(d)
     WHERE v.d IS NOT NULL`,
    [projectId, set.persons],
  )
}
