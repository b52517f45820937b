import type { DashboardTemplate, TemplateTile } from './dashboard-types.ts'
import { lookupTable } from '../../shared/lookup-table.ts'

/**
 * Built-in templates for `use_template`. PostHog keeps `DEFAULT_APP` (its "Product analytics" starter)
 * and `WEBSITE_TRAFFIC` in `posthog/helpers/dashboard_templates.py`; these are Tally's own versions of
 * the same two, as trends/retention/funnel insight definitions the query engine will run later.
 */
function layout(i: number, x: number, y: number, w = 6, h = 5) {
  return { sm: { i: String(i), x, y, w, h, minW: 3, minH: 5 }, xs: { i: String(i), x: 0, y: y * 2 + x, w: 1, h, minW: 1, minH: 5 } }
}

function trends(name: string, description: string, series: Record<string, unknown>[], extra: Record<string, unknown>, at: ReturnType<typeof layout>, color: string | null = null): TemplateTile {
  return {
    type: 'INSIGHT',
    name,
    description,
    filters: { insight: 'TRENDS', events: series, interval: 'day', date_from: '-30d', ...extra },
    layouts: at,
    color,
  }
}

const PAGEVIEW = { id: '$pageview', type: 'events', order: 0 }

const PRODUCT_ANALYTICS: DashboardTemplate = {
  template_name: 'Product analytics',
  dashboard_description: 'High-level overview of your product including daily active users, weekly active users, retention, and growth.',
  dashboard_filters: {},
  tags: [],
  tiles: [
    trends('Daily active users (DAUs)', 'Shows the number of unique users that use your app every day.', [{ ...PAGEVIEW, math: 'dau' }], { display: 'ActionsLineGraph' }, layout(0, 0, 0), 'blue'),
    trends('Weekly active users (WAUs)', 'Shows the number of unique users that use your app every week.', [{ ...PAGEVIEW, math: 'dau' }], { display: 'ActionsBar', interval: 'week', date_from: '-90d' }, layout(1, 6, 0), 'green'),
    {
      type: 'INSIGHT',
      name: 'Retention',
      description: 'Weekly retention of your users.',
      filters: { insight: 'RETENTION', period: 'Week', target_entity: PAGEVIEW, returning_entity: PAGEVIEW, retention_type: 'retention_first_time', total_intervals: 9, date_from: '-7d' },
      layouts: layout(2, 6, 5),
      color: 'blue',
    },
    {
      type: 'INSIGHT',
      name: 'Growth accounting',
      description: 'How many of your users are new, returning, resurrecting, or dormant each week.',
      filters: { insight: 'LIFECYCLE', events: [PAGEVIEW], interval: 'week', shown_as: 'Lifecycle', date_from: '-30d' },
      layouts: layout(3, 0, 5),
      color: 'purple',
    },
    trends('Referring domain (last 14 days)', 'Shows the most common domains your users are coming from.', [{ ...PAGEVIEW, math: 'dau' }], { display: 'ActionsBarValue', breakdown: '$referring_domain', breakdown_type: 'event', date_from: '-14d' }, layout(4, 0, 10), 'black'),
    {
      type: 'INSIGHT',
      name: 'Pageview funnel, by browser',
      description: 'Conversion from a first to a third pageview, broken down by browser.',
      filters: { insight: 'FUNNELS', events: [0, 1, 2].map((order) => ({ ...PAGEVIEW, order })), breakdown: '$browser', breakdown_type: 'event', funnel_viz_type: 'steps', date_from: '-14d' },
      layouts: layout(5, 6, 10),
      color: 'green',
    },
  ],
}

const WEBSITE_TRAFFIC: DashboardTemplate = {
  template_name: 'Website traffic',
  dashboard_description: 'Unique visitors, sessions and top pages of your website.',
  dashboard_filters: { date_from: '-30d' },
  tags: ['marketing'],
  tiles: [
    trends('Website Unique Users (Total)', 'Shows the number of unique users that use your app every day.', [{ ...PAGEVIEW, math: 'dau' }], { display: 'BoldNumber', compare: true }, layout(0, 0, 0), 'blue'),
    trends('Website Unique Users (Breakdown)', '', [{ ...PAGEVIEW, math: 'dau' }], { display: 'ActionsBar', interval: 'week' }, layout(1, 6, 0), 'green'),
    trends('Top Website Pages (Overall)', '', [{ ...PAGEVIEW, math: 'unique_session' }], { display: 'ActionsBarValue', breakdown: '$current_url', breakdown_type: 'event' }, layout(2, 0, 5, 6, 8), 'black'),
    trends('Website Users by Location', '', [{ ...PAGEVIEW, math: 'dau' }], { display: 'WorldMap', breakdown: '$geoip_country_code', breakdown_type: 'person' }, layout(3, 6, 5, 6, 8)),
  ],
}

const BUILT_IN = lookupTable<DashboardTemplate>({ DEFAULT_APP: PRODUCT_ANALYTICS, WEBSITE_TRAFFIC })

/** The built-in template named by key (`DEFAULT_APP`) or by its template name (`Product analytics`). */
export function findBuiltInTemplate(key: string): DashboardTemplate | null {
  return BUILT_IN[key] ?? Object.values(BUILT_IN).find((t) => t?.template_name === key) ?? null
}
