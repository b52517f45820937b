import { lazy, Suspense, useEffect, useState } from 'react'
import { Link, Redirect, Route, Switch, useLocation } from 'wouter'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { api, ApiError, personalKey } from './api.ts'
import { SessionContext, useSession, useSessionQuery } from './session.tsx'
import type { EventListJson } from '../../src/http/wire-types.ts'
import { ErrorBox } from './ui.tsx'
import { LoginPage } from './pages/login.tsx'

// Each section is its own chunk: the first load carries only the shell and the sign-in page.
const WebAnalyticsPage = lazy(() => import('./pages/web-analytics.tsx'))
const SessionDetailPage = lazy(() => import('./pages/session-detail.tsx'))
const ActivityPage = lazy(() => import('./pages/activity.tsx'))
const PersonsPage = lazy(() => import('./pages/persons.tsx'))
const GroupsPage = lazy(() => import('./pages/groups.tsx'))
const InsightsPage = lazy(() => import('./pages/insights.tsx'))
const DashboardsPage = lazy(() => import('./pages/dashboards.tsx'))
const FlagsPage = lazy(() => import('./pages/feature-flags.tsx'))
const ActionsPage = lazy(() => import('./pages/actions.tsx'))
const CohortsPage = lazy(() => import('./pages/cohorts.tsx'))
const SettingsPage = lazy(() => import('./pages/settings.tsx'))
const ReplayPage = lazy(() => import('./pages/replay.tsx'))
const SetupPage = lazy(() => import('./pages/setup.tsx'))
const SignupPage = lazy(() => import('./pages/signup.tsx'))

const NAV = [
  ['/web', 'Web analytics'],
  ['/activity', 'Activity'],
  ['/persons', 'People'],
  ['/groups', 'Groups'],
  ['/insights', 'Insights'],
  ['/replay', 'Replay'],
  ['/dashboards', 'Dashboards'],
  ['/feature_flags', 'Feature flags'],
  ['/actions', 'Actions'],
  ['/cohorts', 'Cohorts'],
  ['/settings', 'Settings'],
] as const

const Loading = () => <p className="muted" role="status">Loading…</p>

/**
 * The first page after sign-in: Web analytics once the project has page views (the screen a
 * posthog-js user opens first), Activity before that (where the first events show up).
 */
function Home() {
  const { base } = useSession()
  const pageviews = useQuery({ queryKey: ['has-pageviews', base], queryFn: () => api<EventListJson>(`${base}/events/?event=%24pageview&limit=1`), retry: false })
  if (pageviews.isPending) return <Loading />
  return <Redirect to={pageviews.data && pageviews.data.results.length > 0 ? '/web' : '/activity'} replace />
}

/** Any other address: says so, and lists what the app has (no raw 404). */
function NotFound() {
  const [location] = useLocation()
  return (
    <>
      <h1>Page not found</h1>
      <p>Tally has no page at <code>{location}</code>. These are the pages it has:</p>
      <ul aria-label="Pages">
        {NAV.map(([href, label]) => <li key={href}><Link href={href}>{label}</Link></li>)}
      </ul>
    </>
  )
}

export function App() {
  return (
    <Suspense fallback={<Loading />}>
      <Switch>
        <Route path="/login" component={LoginPage} />
        <Route path="/setup" component={SetupPage} />
        <Route path="/signup" component={SignupPage} />
        <Route component={SignedIn} />
      </Switch>
    </Suspense>
  )
}

function SignedIn() {
  const session = useSessionQuery()
  const [location] = useLocation()
  if (session.error instanceof ApiError && (session.error.status === 401 || session.error.status === 403)) {
    return <Redirect to={`/login?next=${encodeURIComponent(location)}`} />
  }
  if (session.error) return <main className="center"><ErrorBox error={session.error} /></main>
  if (!session.data) return <Loading />
  return (
    <SessionContext.Provider value={session.data}>
      <Shell name={session.data.me?.first_name || session.data.me?.email || 'API key'} project={session.data.project.name} />
    </SessionContext.Provider>
  )
}

function Shell({ name, project }: { name: string; project: string }) {
  const [location] = useLocation()
  const [menuOpen, setMenuOpen] = useState(false)
  const queryClient = useQueryClient()
  useEffect(() => setMenuOpen(false), [location])
  const signOut = async () => {
    if (personalKey.get()) personalKey.clear()
    else await api('/api/logout/', { method: 'POST' }).catch(() => undefined)
    queryClient.clear()
    window.location.assign('/login')
  }
  return (
    <div className="shell">
      <a className="skip" href="#main">Skip to content</a>
      <header className="topbar">
        <button type="button" className="btn icon menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <Link href="/" className="brand"><span className="logo" aria-hidden="true" />Tally</Link>
        <span className="project" title="Project">{project}</span>
        <span className="spacer" />
        <span className="user">{name}</span>
        <button type="button" className="btn small" onClick={() => void signOut()}>Sign out</button>
      </header>
      <nav id="nav" className={menuOpen ? 'nav open' : 'nav'} aria-label="Main">
        {NAV.map(([href, label]) => (
          <Link key={href} href={href} className={location.startsWith(href) ? 'active' : ''} aria-current={location.startsWith(href) ? 'page' : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      <main id="main" className="content">
        <Suspense fallback={<Loading />}>
          <Switch>
            <Route path="/web" component={WebAnalyticsPage} />
            <Route path="/sessions/:id" component={SessionDetailPage} />
            <Route path="/activity" component={ActivityPage} nest />
            <Route path="/persons" component={PersonsPage} nest />
            <Route path="/groups" component={GroupsPage} nest />
            <Route path="/insights" component={InsightsPage} nest />
            <Route path="/dashboards" component={DashboardsPage} nest />
            <Route path="/feature_flags" component={FlagsPage} nest />
            <Route path="/actions" component={ActionsPage} nest />
            <Route path="/cohorts" component={CohortsPage} nest />
            <Route path="/settings" component={SettingsPage} nest />
            <Route path="/replay" component={ReplayPage} nest />
            <Route path="/" component={Home} />
            <Route component={NotFound} />
          </Switch>
        </Suspense>
      </main>
    </div>
  )
}
