import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { App } from './app.tsx'
import { ApiError } from './api.ts'
import './styles.css'

/** A session that ended while the app was open (expired, signed out elsewhere): back to the sign-in page. */
function onError(err: unknown) {
  const path = window.location.pathname
  if (err instanceof ApiError && err.status === 401 && !['/login', '/setup', '/signup'].includes(path)) {
    window.location.assign(`/login?next=${encodeURIComponent(path + window.location.search)}`)
  }
}

const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: { queries: { staleTime: 10_000, refetchOnWindowFocus: false } },
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
)
