import { useState, type FormEvent } from 'react'
import { useLocation, useSearch } from 'wouter'
import { useQueryClient } from '@tanstack/react-query'
import { api, personalKey } from '../api.ts'
import { ErrorBox, Field } from '../ui.tsx'

/** Where to go after signing in: only a path of this app (never another origin). */
export function safeNext(search: string): string {
  const next = new URLSearchParams(search).get('next') ?? ''
  return next.startsWith('/') && !next.startsWith('//') ? next : '/'
}

/** Sign in with e-mail and password (a session cookie), or with a personal API key. */
export function LoginPage() {
  const [, navigate] = useLocation()
  const search = useSearch()
  const queryClient = useQueryClient()
  const [withKey, setWithKey] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    setBusy(true)
    setError(null)
    try {
      if (withKey) {
        personalKey.set(String(form.get('key')).trim())
        await api('/api/projects/')
      } else {
        personalKey.clear()
        await api('/api/login/', { method: 'POST', body: { email: form.get('email'), password: form.get('password') } })
      }
      await queryClient.resetQueries({ queryKey: ['session'] })
      navigate(safeNext(search))
    } catch (err) {
      if (withKey) personalKey.clear()
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  return (
    <main className="auth-page">
      <form className="auth-card" onSubmit={(e) => void submit(e)}>
        <div className="brand big"><span className="logo" aria-hidden="true" />Tally</div>
        <h1>Sign in</h1>
        {withKey ? (
          <Field label="Personal API key" hint="Created in Settings, or printed by the first start.">
            <input name="key" required autoComplete="off" placeholder="phx_…" />
          </Field>
        ) : (
          <>
            <Field label="Email"><input name="email" type="email" required autoComplete="username" /></Field>
            <Field label="Password"><input name="password" type="password" required autoComplete="current-password" /></Field>
          </>
        )}
        {error != null && <ErrorBox error={error} />}
        <button className="btn primary wide" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
        <button type="button" className="link" onClick={() => { setWithKey(!withKey); setError(null) }}>
          {withKey ? 'Sign in with email and password' : 'Sign in with a personal API key'}
        </button>
      </form>
    </main>
  )
}
