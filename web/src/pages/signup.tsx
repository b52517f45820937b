import { useState, type FormEvent } from 'react'
import { useLocation, useSearch } from 'wouter'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { api, personalKey } from '../api.ts'
import { ErrorBox, Field } from '../ui.tsx'

interface InviteCheck {
  valid: boolean
  target_email: string | null
  organization_name: string | null
}

/** Accepting an invitation (`/signup?invite=TOKEN`): a password and a name, then signed in. */
export default function SignupPage() {
  const token = new URLSearchParams(useSearch()).get('invite') ?? ''
  const [, navigate] = useLocation()
  const queryClient = useQueryClient()
  const invite = useQuery({ queryKey: ['invite', token], queryFn: () => api<InviteCheck>(`/api/signup/invite/?token=${encodeURIComponent(token)}`), retry: false })
  const [error, setError] = useState<unknown>(null)
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget)
    try {
      personalKey.clear()
      await api('/api/signup/', { method: 'POST', body: { invite_token: token, password: f.get('password'), first_name: f.get('first_name') } })
      await queryClient.resetQueries({ queryKey: ['session'] })
      navigate('/activity')
    } catch (err) {
      setError(err)
    }
  }
  const email = invite.data?.target_email
  return (
    <main className="auth-page">
      <form className="auth-card" onSubmit={(e) => void submit(e)}>
        <div className="brand big"><span className="logo" aria-hidden="true" />Tally</div>
        <h1>Join {invite.data?.organization_name ?? 'Tally'}</h1>
        {email && <p className="muted">You were invited as <strong>{email}</strong>.</p>}
        {invite.error ? <ErrorBox error={invite.error} /> : null}
        {invite.data?.valid === false && <ErrorBox error="This invitation was used already or has expired. Ask for a new one." />}
        <Field label="Your first name"><input name="first_name" required autoComplete="given-name" /></Field>
        <Field label="Password" hint="At least 8 characters."><input name="password" type="password" minLength={8} required autoComplete="new-password" /></Field>
        {error != null && <ErrorBox error={error} />}
        <button className="btn primary wide" disabled={!!invite.error || invite.data?.valid === false}>Create account</button>
      </form>
    </main>
  )
}
