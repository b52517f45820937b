-- Project memberships follow the organisation level (PostHog's UserTeamPermissions: a project without
-- access control gives each organisation member their organisation level). Projects created before
-- this fix gave every organisation member level 8 (admin): a member could edit an owner's restricted
-- dashboard there. Every other path (bootstrap, sign-up, invites, level changes) already keeps the
-- two levels equal, so aligning them undoes exactly that.
UPDATE project_members pm SET level = om.level
FROM projects p, organization_members om
WHERE pm.project_id = p.id AND om.organization_id = p.organization_id AND om.user_id = pm.user_id AND pm.level <> om.level;
