import { useEffect, useMemo, useRef, useState } from 'react'
import { Replayer } from 'rrweb'
import 'rrweb/dist/style.css'
import { consoleLines, type ReplayEvent } from './snapshots.ts'

/** An analytics event of the session, placed on the timeline. */
export interface TimelineEvent {
  uuid: string
  event: string
  timestamp: number
  url: string | null
}

const SPEEDS = [0.5, 1, 2, 4, 8] as const

const fmt = (ms: number) => {
  const s = Math.max(0, Math.floor(ms / 1000))
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
}

const kindOf = (event: string) =>
  event === '$autocapture' ? 'click' : event === '$pageview' ? 'pageview' : event === '$exception' ? 'exception' : event.startsWith('$') ? 'system' : 'custom'

/**
 * rrweb's own Replayer in a frame, with play/pause, speed, skip inactivity, a seek bar, the
 * session's events on a timeline (click one to seek to it) and the console log beside it. Plays one
 * window: the one with most events (another tab of the session is another window).
 */
export function Player({ events, timeline, startAt }: { events: ReplayEvent[]; timeline: TimelineEvent[]; startAt?: number }) {
  const frame = useRef<HTMLDivElement>(null)
  const replayer = useRef<Replayer | null>(null)
  const [playing, setPlaying] = useState(false)
  const [speed, setSpeed] = useState<number>(1)
  const [skip, setSkip] = useState(true)
  const [now, setNow] = useState(0)
  const played = useMemo(() => {
    const counts = new Map<string, number>()
    for (const e of events) counts.set(e.windowId ?? '', (counts.get(e.windowId ?? '') ?? 0) + 1)
    const main = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0]
    return events.filter((e) => (e.windowId ?? '') === main)
  }, [events])
  const start = played[0]?.timestamp ?? 0
  const total = (played[played.length - 1]?.timestamp ?? 0) - start
  const logs = useMemo(() => consoleLines(events), [events])

  useEffect(() => {
    if (!frame.current || played.length < 2) return
    const r = new Replayer(played as never, { root: frame.current, skipInactive: true, showWarning: false, mouseTail: false, UNSAFE_replayCanvas: false })
    replayer.current = r
    r.on('finish', () => setPlaying(false))
    // The recorded viewport scaled down to fit the frame (rrweb reports the size on every resize).
    r.on('resize', (size) => {
      const { width, height } = size as { width: number; height: number }
      const box = frame.current
      if (!box || !width || !height) return
      const scale = Math.min(1, box.clientWidth / width, box.clientHeight / height)
      r.wrapper.style.transform = `scale(${scale})`
    })
    const offset = startAt ? Math.max(0, startAt - start) : 0
    r.pause(offset)
    setNow(offset)
    const tick = setInterval(() => setNow(r.getCurrentTime()), 200)
    return () => {
      clearInterval(tick)
      r.destroy()
      replayer.current = null
    }
  }, [played, start, startAt])

  const seek = (offset: number) => {
    const r = replayer.current
    if (!r) return
    const at = Math.min(Math.max(0, offset), total)
    if (playing) r.play(at)
    else r.pause(at)
    setNow(at)
  }
  const toggle = () => {
    const r = replayer.current
    if (!r) return
    if (playing) r.pause()
    else r.play(now >= total ? 0 : now)
    setPlaying(!playing)
  }
  if (played.length < 2) return <p className="muted">This recording has no playable snapshot yet.</p>
  return (
    <div className="player">
      <div className="player-frame" ref={frame} data-testid="replay-frame" />
      <div className="player-controls row">
        <button type="button" className="btn primary" onClick={toggle} aria-label={playing ? 'Pause' : 'Play'}>{playing ? 'Pause' : 'Play'}</button>
        <span className="mono" aria-label="Position">{fmt(now)} / {fmt(total)}</span>
        <input type="range" aria-label="Seek" min={0} max={total} value={Math.min(now, total)} onChange={(e) => seek(Number(e.target.value))} style={{ flex: 1 }} />
        <label>Speed{' '}
          <select value={speed} onChange={(e) => { const v = Number(e.target.value); setSpeed(v); replayer.current?.setConfig({ speed: v }) }}>
            {SPEEDS.map((s) => <option key={s} value={s}>{s}×</option>)}
          </select>
        </label>
        <label><input type="checkbox" checked={skip} onChange={(e) => { setSkip(e.target.checked); replayer.current?.setConfig({ skipInactive: e.target.checked }) }} /> Skip inactivity</label>
      </div>
      <div className="player-panels">
        <section aria-label="Timeline">
          <h3>Events</h3>
          {timeline.length === 0 ? <p className="muted">No events in this session.</p> : (
            <ol className="timeline">
              {timeline.map((t) => (
                <li key={t.uuid} className={`timeline-${kindOf(t.event)}`}>
                  <button type="button" className="link" onClick={() => seek(t.timestamp - start)}>
                    <span className="mono">{fmt(t.timestamp - start)}</span> {t.event}
                  </button>
                  {t.url && <span className="muted"> {t.url}</span>}
                </li>
              ))}
            </ol>
          )}
        </section>
        <section aria-label="Console">
          <h3>Console</h3>
          {logs.length === 0 ? <p className="muted">Nothing was logged.</p> : (
            <ol className="console-log">
              {logs.map((l, i) => (
                <li key={i} className={`console-${l.level}`}>
                  <button type="button" className="link mono" onClick={() => seek(l.timestamp - start)}>{fmt(l.timestamp - start)}</button> <strong>{l.level}</strong> {l.text}
                </li>
              ))}
            </ol>
          )}
        </section>
      </div>
    </div>
  )
}
