import { useState, type FormEvent } from 'react'
import { useLocation, useSearch } from 'wouter'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { api, personalKey } from '../api.ts'
import { ErrorBox, Field } from '../ui.tsx'

/** The first start's one-time link: the owner chooses an e-mail and a password. */
export default function SetupPage() {
  const token = new URLSearchParams(useSearch()).get('token') ?? ''
  const [, navigate] = useLocation()
  const queryClient = useQueryClient()
  const check = useQuery({ queryKey: ['setup', token], queryFn: () => api<{ valid: boolean }>(`/api/setup/?token=${encodeURIComponent(token)}`), retry: false })
  const [error, setError] = useState<unknown>(null)
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget)
    try {
      personalKey.clear()
      await api('/api/setup/', { method: 'POST', body: { token, email: f.get('email'), password: f.get('password'), first_name: f.get('first_name') } })
      await queryClient.resetQueries({ queryKey: ['session'] })
      navigate('/activity')
    } catch (err) {
      setError(err)
    }
  }
  return (
    <main className="auth-page">
      <form className="auth-card" onSubmit={(e) => void submit(e)}>
        <div className="brand big"><span className="logo" aria-hidden="true" />Tally</div>
        <h1>Set up Tally</h1>
        <p className="muted">Choose the owner's e-mail and password. This link works once.</p>
        {check.error ? <ErrorBox error={check.error} /> : null}
        {check.data?.valid === false && <ErrorBox error="This set-up link was used already or has expired. Ask for a new one: tally users setup-link." />}
        <Field label="Your first name"><input name="first_name" required autoComplete="given-name" /></Field>
        <Field label="Email"><input name="email" type="email" required autoComplete="username" /></Field>
        <Field label="Password" hint="At least 8 characters."><input name="password" type="password" minLength={8} required autoComplete="new-password" /></Field>
        {error != null && <ErrorBox error={error} />}
        <button className="btn primary wide" disabled={!!check.error || check.data?.valid === false}>Create owner account</button>
      </form>
    </main>
  )
}
