/**
 * Built-in dashboard templates in PostHog's `dashboard_template_schema.json` shape, sent to
 * `create_from_template_json`.
 */
const trend = (event: string, math: string, display: string) => ({
  kind: 'InsightVizNode',
  source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event, name: event, math }], interval: 'day', dateRange: { date_from: '-30d' }, trendsFilter: { display } },
})

export const TEMPLATES = [
  {
    template_name: 'Product analytics',
    dashboard_description: 'Traffic, active users and the pages people land on.',
    dashboard_filters: {},
    tags: [],
    tiles: [
      { type: 'INSIGHT', name: 'Pageviews', description: '', query: trend('$pageview', 'total', 'ActionsLineGraph'), layouts: {}, color: null },
      { type: 'INSIGHT', name: 'Daily active users', description: '', query: trend('$pageview', 'dau', 'ActionsBar'), layouts: {}, color: null },
      { type: 'INSIGHT', name: 'Pageviews (30 days)', description: '', query: trend('$pageview', 'total', 'BoldNumber'), layouts: {}, color: null },
      {
        type: 'INSIGHT', name: 'Landing pages', description: 'The pages sessions start on, with their visitors, views and bounce rate (last 30 days).',
        query: { kind: 'DataTableNode', source: { kind: 'WebStatsTableQuery', breakdownBy: 'InitialPage', dateRange: { date_from: '-30d' }, properties: [], includeBounceRate: true, limit: 10 } },
        layouts: {}, color: null,
      },
      { type: 'TEXT', body: 'Made from the Product analytics template. Edit the insights to fit your events.', layouts: {}, color: null },
    ],
  },
]
