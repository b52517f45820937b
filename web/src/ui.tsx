import { useState, type ReactNode } from 'react'
import { errorText } from './api.ts'

/** The title row of a page, with its actions on the right. */
export function PageHeader({ title, description, children }: { title: string; description?: string; children?: ReactNode }) {
  return (
    <header className="page-header">
      <div>
        <h1>{title}</h1>
        {description && <p className="muted">{description}</p>}
      </div>
      {children && <div className="page-actions">{children}</div>}
    </header>
  )
}

/** A query's loading and error states; renders children once data is there. */
export function Loadable<T>({ query, children }: { query: { data?: T; error: unknown; isPending: boolean }; children: (data: T) => ReactNode }) {
  if (query.error) return <ErrorBox error={query.error} />
  if (query.isPending || query.data === undefined) return <p className="muted" role="status">Loading…</p>
  return <>{children(query.data)}</>
}

export function ErrorBox({ error }: { error: unknown }) {
  return <div className="error-box" role="alert">{errorText(error)}</div>
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>
}

export function Card({ title, children, actions }: { title?: ReactNode; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card">
      {(title || actions) && (
        <div className="card-head">
          {title && <h2>{title}</h2>}
          {actions}
        </div>
      )}
      {children}
    </section>
  )
}

/** A labelled form field (label wraps the control so it is always named). */
export function Field({ label, children, hint }: { label: string; children: ReactNode; hint?: string }) {
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      {children}
      {hint && <span className="hint">{hint}</span>}
    </label>
  )
}

/** A copy-to-clipboard button that says when it worked. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false)
  return (
    <button
      type="button"
      className="btn small"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => setDone(true), () => setDone(false))
        setTimeout(() => setDone(false), 2000)
      }}
    >
      {done ? 'Copied' : label}
    </button>
  )
}

/** A JSON value, pretty-printed. */
export function JsonView({ value }: { value: unknown }) {
  return <pre className="json" tabIndex={0}>{JSON.stringify(value, null, 2)}</pre>
}

/** Relative time for recent timestamps, the date beyond a week. */
export function Ago({ iso }: { iso: string }) {
  const t = new Date(iso)
  const s = Math.round((Date.now() - t.getTime()) / 1000)
  const text = s < 60 ? `${Math.max(s, 0)}s ago` : s < 3600 ? `${Math.floor(s / 60)}m ago` : s < 86400 ? `${Math.floor(s / 3600)}h ago` : s < 7 * 86400 ? `${Math.floor(s / 86400)}d ago` : t.toLocaleDateString()
  return <time dateTime={iso} title={t.toLocaleString()}>{text}</time>
}

export function Badge({ children, tone = 'neutral' }: { children: ReactNode; tone?: 'neutral' | 'success' | 'warning' | 'danger' }) {
  return <span className={`badge ${tone}`}>{children}</span>
}
