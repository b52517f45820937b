import { useState } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { LEVEL, useSession } from '../session.tsx'
import type { PersonalKeyJson as KeyJson } from '../../../src/http/wire-types.ts'
import { Ago, Badge, Card, CopyButton, Empty, ErrorBox, Field, Loadable } from '../ui.tsx'

interface MemberJson { id: string; level: number; joined_at: string; user: { uuid: string; email: string; first_name: string } }
interface InviteJson { id: string; target_email: string; level?: number; invite_url?: string; created_at: string }

const LEVEL_NAME: Record<number, string> = { [LEVEL.member]: 'Member', [LEVEL.admin]: 'Admin', [LEVEL.owner]: 'Owner' }
const results = <T,>(body: T[] | { results: T[] }): T[] => (Array.isArray(body) ? body : body.results)

/** The signed-in user's own personal API keys: create (the value is shown once), revoke. */
export function PersonalKeys() {
  const queryClient = useQueryClient()
  const keys = useQuery({ queryKey: ['personal-keys'], queryFn: async () => results(await api<KeyJson[] | { results: KeyJson[] }>('/api/personal_api_keys/')) })
  const [label, setLabel] = useState('')
  const [created, setCreated] = useState<KeyJson | null>(null)
  const create = useMutation({
    mutationFn: () => api<KeyJson>('/api/personal_api_keys/', { method: 'POST', body: { label, scopes: ['*'] } }),
    onSuccess: async (k) => { setCreated(k); setLabel(''); await queryClient.invalidateQueries({ queryKey: ['personal-keys'] }) },
  })
  const revoke = useMutation({
    mutationFn: (id: number) => api(`/api/personal_api_keys/${id}/`, { method: 'DELETE' }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['personal-keys'] }),
  })
  return (
    <>
      <Card title="Create a personal API key">
          <form className="row" onSubmit={(e) => { e.preventDefault(); create.mutate() }}>
            <Field label="Label"><input value={label} onChange={(e) => setLabel(e.target.value)} required /></Field>
            <button className="btn primary" disabled={create.isPending}>Create key</button>
          </form>
          {create.error && <ErrorBox error={create.error} />}
          {created?.value && (
            <div className="condition" role="status" style={{ marginTop: 12 }}>
              <p>Copy the key now: it will not be shown again.</p>
              <p className="mono"><span data-testid="new-key">{created.value}</span> <CopyButton text={created.value} /></p>
            </div>
          )}
      </Card>
      <Card title="Your personal API keys">
        <p className="muted">Each key acts as you on the private API. Nobody else sees or revokes your keys.</p>
        {revoke.error && <ErrorBox error={revoke.error} />}
        <Loadable query={keys}>
          {(list) => list.length === 0 ? <Empty>No personal API keys.</Empty> : (
            <table aria-label="Personal API keys">
              <thead><tr><th>Label</th><th className="hide-narrow">Key</th><th>Last used</th><th><span className="skip">Actions</span></th></tr></thead>
              <tbody>
                {list.map((k) => (
                  <tr key={k.id}>
                    <td>{k.label}</td>
                    <td className="mono hide-narrow">{k.mask_value}</td>
                    <td>{k.last_used_at ? <Ago iso={k.last_used_at} /> : 'never'}</td>
                    <td><button type="button" className="btn small danger" onClick={() => revoke.mutate(k.id)} aria-label={`Revoke ${k.label}`}>Revoke</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Loadable>
      </Card>
    </>
  )
}

/** Members of the organization and pending invitations (one-time links with a role). */
export function Members() {
  const { canManage, level: myLevel, me } = useSession()
  const queryClient = useQueryClient()
  const members = useQuery({ queryKey: ['members'], queryFn: async () => results(await api<MemberJson[] | { results: MemberJson[] }>('/api/organizations/@current/members/')) })
  const invites = useQuery({ queryKey: ['invites'], queryFn: async () => results(await api<InviteJson[] | { results: InviteJson[] }>('/api/organizations/@current/invites/')), enabled: canManage })
  const [email, setEmail] = useState('')
  const [level, setLevel] = useState<number>(LEVEL.member)
  const [link, setLink] = useState<string | null>(null)
  const invite = useMutation({
    mutationFn: () => api<InviteJson>('/api/organizations/@current/invites/', { method: 'POST', body: { target_email: email, level } }),
    onSuccess: async (inv) => {
      setLink(inv.invite_url ? new URL(inv.invite_url, window.location.origin).toString() : null)
      setEmail('')
      await queryClient.invalidateQueries({ queryKey: ['invites'] })
    },
  })
  const remove = useMutation({
    mutationFn: (uuid: string) => api(`/api/organizations/@current/members/${uuid}/`, { method: 'DELETE' }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['members'] }),
  })
  return (
    <>
      {canManage && (
        <Card title="Invite someone">
          <form className="row" onSubmit={(e) => { e.preventDefault(); invite.mutate() }}>
            <Field label="Email"><input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required /></Field>
            <Field label="Role">
              <select value={level} onChange={(e) => setLevel(Number(e.target.value))}>
                <option value={LEVEL.member}>Member</option><option value={LEVEL.admin}>Admin</option>
                {myLevel >= LEVEL.owner && <option value={LEVEL.owner}>Owner</option>}
              </select>
            </Field>
            <button className="btn primary" disabled={invite.isPending}>Create invite link</button>
          </form>
          {invite.error && <ErrorBox error={invite.error} />}
          {link && <p className="mono" role="status" style={{ marginTop: 12 }}><span data-testid="invite-link">{link}</span> <CopyButton text={link} /></p>}
        </Card>
      )}
      <Card title="Members">
        {remove.error && <ErrorBox error={remove.error} />}
        <Loadable query={members}>
          {(list) => (
            <table aria-label="Members">
              <thead><tr><th>Name</th><th>Email</th><th>Role</th><th><span className="skip">Actions</span></th></tr></thead>
              <tbody>
                {list.map((m) => (
                  <tr key={m.user.uuid}>
                    <td>{m.user.first_name}</td>
                    <td>{m.user.email}</td>
                    <td><Badge>{LEVEL_NAME[m.level] ?? m.level}</Badge></td>
                    <td>{/* PostHog: only others at or below your own level, never yourself. */}
                      {canManage && m.level <= myLevel && m.user.uuid !== me?.uuid && <button type="button" className="btn small danger" onClick={() => remove.mutate(m.user.uuid)}>Remove</button>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Loadable>
      </Card>
      {canManage && (
        <Card title="Pending invitations">
          <Loadable query={invites}>
            {(list) => list.length === 0 ? <p className="muted">None.</p> : (
              <table aria-label="Invitations"><tbody>
                {list.map((i) => <tr key={i.id}><td>{i.target_email}</td><td>{LEVEL_NAME[i.level ?? 1]}</td><td><Ago iso={i.created_at} /></td></tr>)}
              </tbody></table>
            )}
          </Loadable>
        </Card>
      )}
    </>
  )
}
