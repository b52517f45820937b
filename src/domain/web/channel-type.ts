import { and, bin, lit, notNull, type Expr } from '../query/query-plan.ts'
import { MEDIUMS, SOURCE_KIND_CHANNELS, SOURCE_KINDS } from './channel-definitions.ts'

/**
 * PostHog's default channel types (`DefaultChannelTypes`), the values `$channel_type` takes.
 */
export const DEFAULT_CHANNEL_TYPES = [
  'Cross Network', 'Paid Search', 'Paid Social', 'Paid Video', 'Paid Shopping', 'Paid Unknown', 'Direct',
  'Organic Search', 'Organic Social', 'Organic Video', 'Organic Shopping', 'Push', 'SMS', 'Audio', 'Email',
  'Referral', 'Affiliate', 'Unknown',
] as const

/** What the rules read of a session: its first event's UTMs, referring domain and ad click ids. */
export interface ChannelInputs {
  /** `channelSource` of the session's utm_source. */
  source: Expr
  /** `sourceKindExpr` of `source`, and of the referring domain. */
  sourceKind: Expr
  referringDomainKind: Expr
  medium: Expr
  campaign: Expr
  referringDomain: Expr
  gclid: Expr
  fbclid: Expr
  gadSource: Expr
}

const nullIfEmpty = (e: Expr): Expr => ({ op: 'case', when: [[{ op: 'in', arg: e, values: ['', 'null'] }, lit(null)]], else: e })
const lower = (e: Expr): Expr => ({ op: 'lower', arg: e })
const matches = (arg: Expr, pattern: string): Expr => ({ op: 'matches', arg, pattern })
const coalesce = (...args: Expr[]): Expr => ({ op: 'coalesce', args })
const cases = (when: Array<[Expr, Expr]>, otherwise: Expr): Expr => ({ op: 'case', when, else: otherwise })

type Table = Array<readonly [string, readonly string[]]>
const KIND_TABLE: Table = [...SOURCE_KINDS]
function mediumTable(which: 'paid' | 'organic'): Table {
  const byChannel = new Map<string, string[]>()
  for (const [medium, paid, organic] of MEDIUMS) {
    const channel = which === 'paid' ? paid : organic
    if (channel) byChannel.set(channel, [...(byChannel.get(channel) ?? []), medium])
  }
  return [...byChannel]
}
const PAID_MEDIUM = mediumTable('paid')
const ORGANIC_MEDIUM = mediumTable('organic')

/**
 * ClickHouse's `cutToFirstSignificantSubdomain` of a host: its last two labels, or three when the
 * second-level label is `com`, `net`, `org` or `co` (`www.google.co.uk` → `google.co.uk`).
 */
export function significantDomain(host: Expr): Expr {
  return coalesce(
    { op: 'regex_extract', arg: host, pattern: '([^.]+\\.(?:com|net|org|co)\\.[^.]+)$' },
    { op: 'regex_extract', arg: host, pattern: '([^.]+\\.[^.]+)$' },
  )
}

/**
 * The kind of a source (`Search`, `Social`...; NULL when unlisted): the exact text, then its
 * significant domain, as PostHog's `lookupPaidSourceType`/`lookupOrganicSourceType` look it up. Worth
 * computing once per session as a column: the table is large (`channelTypeExpr` reads the column).
 */
export function sourceKindExpr(value: Expr): Expr {
  return coalesce({ op: 'lookup', arg: value, table: KIND_TABLE }, { op: 'lookup', arg: significantDomain(value), table: KIND_TABLE })
}

/** The source inputs lowered as the rules compare them (`sourceKindExpr` of it is `sourceKind`). */
export function channelSource(source: Expr): Expr {
  return lower(nullIfEmpty(source))
}

function kindChannel(kind: Expr, which: 'paid' | 'organic'): Expr {
  const when = Object.entries(SOURCE_KIND_CHANNELS)
    .filter(([, c]) => c[which] !== null)
    .map(([k, c]): [Expr, Expr] => [bin('=', kind, lit(k)), lit(c[which])])
  return cases(when, lit(null))
}

const SHOPPING_CAMPAIGN = '^(.*(([^a-df-z]|^)shop|shopping).*)$'
const VIDEO_CAMPAIGN = '^(.*video.*)$'
const PAID_MEDIUMS = ['cpc', 'cpm', 'cpv', 'cpa', 'ppc', 'retargeting']

/**
 * A session's channel type by PostHog's default rules and their order of precedence
 * (posthog/hogql/database/schema/channel_type.py, documented at posthog.com/docs/data/channel-type):
 * Cross Network; then paid (a paid medium, a gclid or a gad_source) by source, shopping campaign,
 * medium, referring domain, else Paid Search/Video/Social/Unknown; then Direct; then organic by the
 * same lookups, else Organic Video, Push, Organic Social (fbclid), Direct, Referral, Unknown.
 * Source, medium and campaign are compared in lower case, with '' and 'null' as absent.
 */
export function channelTypeExpr(input: ChannelInputs): Expr {
  const campaign = lower(nullIfEmpty(input.campaign))
  const medium = lower(nullIfEmpty(input.medium))
  const source = input.source
  const gadSource = nullIfEmpty(input.gadSource)
  const ref = input.referringDomain
  const hasGclid = notNull(input.gclid)
  const hasFbclid = notNull(input.fbclid)
  const isDirectRef = bin('=', ref, lit('$direct'))
  const isPaid: Expr = {
    op: 'or',
    args: [{ op: 'in', arg: medium, values: PAID_MEDIUMS }, matches(medium, '^paid'), hasGclid, notNull(gadSource)],
  }
  const paid = coalesce(
    kindChannel(input.sourceKind, 'paid'),
    cases([[matches(campaign, SHOPPING_CAMPAIGN), lit('Paid Shopping')]], lit(null)),
    { op: 'lookup', arg: medium, table: PAID_MEDIUM },
    kindChannel(input.referringDomainKind, 'paid'),
    cases([
      [bin('=', gadSource, lit('1')), lit('Paid Search')],
      [matches(campaign, VIDEO_CAMPAIGN), lit('Paid Video')],
      [hasFbclid, lit('Paid Social')],
    ], lit('Paid Unknown')),
  )
  const isDirect = and(
    isDirectRef,
    { op: 'is_null', arg: medium },
    { op: 'or', args: [{ op: 'is_null', arg: source }, { op: 'in', arg: source, values: ['(direct)', 'direct', '$direct'] }] },
    { op: 'not', arg: hasFbclid },
  )!
  const organic = coalesce(
    kindChannel(input.sourceKind, 'organic'),
    cases([[matches(campaign, SHOPPING_CAMPAIGN), lit('Organic Shopping')]], lit(null)),
    { op: 'lookup', arg: medium, table: ORGANIC_MEDIUM },
    kindChannel(input.referringDomainKind, 'organic'),
    cases([
      [matches(campaign, VIDEO_CAMPAIGN), lit('Organic Video')],
      [matches(medium, 'push$'), lit('Push')],
      [hasFbclid, lit('Organic Social')],
      [isDirectRef, lit('Direct')],
      [notNull(ref), lit('Referral')],
    ], lit('Unknown')),
  )
  return cases([
    [matches(campaign, 'cross-network'), lit('Cross Network')],
    [isPaid, paid],
    [isDirect, lit('Direct')],
  ], organic)
}
