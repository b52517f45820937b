import { trendQuery, type TrendSeries, type WebGoal, type WebState } from './web-filters.ts'

/**
 * The trend chart's tabs with a conversion goal, as PostHog's web analytics graphs tile has them
 * (webAnalyticsLogic: `GraphsTab.UNIQUE_CONVERSIONS`, the tab a goal selects, then total conversions,
 * the conversion rate as the formula `A / B` of unique conversions over unique visitors, and visitors).
 */
export type GoalTabId = 'unique_conversions' | 'total_conversions' | 'conversion_rate' | 'visitors'
export interface GoalTab { id: GoalTabId; label: string; percent: boolean }

export const GOAL_TABS: GoalTab[] = [
  { id: 'unique_conversions', label: 'Unique conversions', percent: false },
  { id: 'total_conversions', label: 'Total conversions', percent: false },
  { id: 'conversion_rate', label: 'Conversion rate', percent: true },
  { id: 'visitors', label: 'Visitors', percent: false },
]

/** The goal as a series (PostHog's `uniqueConversionsSeries`): the action's ActionsNode, or the custom event's EventsNode. */
function goalSeries(goal: WebGoal, math: 'dau' | 'total', name: string): TrendSeries {
  const node = 'actionId' in goal ? { kind: 'ActionsNode', id: goal.actionId } : { kind: 'EventsNode', event: goal.customEventName }
  return { ...node, math, name, custom_name: name }
}

const UNIQUE_VISITORS: TrendSeries = { kind: 'EventsNode', event: '$pageview', name: '$pageview', custom_name: 'Unique visitors', math: 'dau' }

/** The TrendsQuery of one goal tab. */
export function goalTrendQuery(s: WebState, goal: WebGoal, tab: GoalTabId) {
  switch (tab) {
    case 'unique_conversions':
      return trendQuery(s, [goalSeries(goal, 'dau', 'Unique conversions')])
    case 'total_conversions':
      return trendQuery(s, [goalSeries(goal, 'total', 'Total conversions')])
    case 'conversion_rate':
      return trendQuery(s, [goalSeries(goal, 'dau', 'Unique conversions'), UNIQUE_VISITORS], 'A / B')
    case 'visitors':
      return trendQuery(s, [UNIQUE_VISITORS])
  }
}
