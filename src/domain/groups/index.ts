export { planGroupUpdates, groupsToLookUp, groupId, MAX_GROUP_TYPES } from './plan-group-updates.ts'
export type { GroupState, GroupEvent, GroupWarning, GroupPlan, PlanGroupUpdatesInput } from './plan-group-updates.ts'
