import { BlockList, isIPv4, type Socket } from 'node:net'
import type { Server } from 'node:http'
import type { Logger } from 'pino'
import { lookupTable } from '../shared/lookup-table.ts'

/** The named ranges proxy-addr (Fastify's `trustProxy`) knows, as subnets. */
const NAMED = lookupTable<Array<[string, number, 'ipv4' | 'ipv6']>>({
  loopback: [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']],
  linklocal: [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']],
  uniquelocal: [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['fc00::', 7, 'ipv6']],
})

/** The trusted-proxy list (IPs, CIDRs, named ranges, as validated by load-config) as a matcher. */
export function proxyBlockList(entries: readonly string[]): (address: string) => boolean {
  if (entries.length === 0) return () => false
  const list = new BlockList()
  for (const e of entries) {
    const named = NAMED[e]
    if (named) {
      for (const [net, prefix, type] of named) list.addSubnet(net, prefix, type)
      continue
    }
    const [ip, prefix] = e.split('/') as [string, string | undefined]
    const type = isIPv4(ip) ? 'ipv4' : 'ipv6'
    if (prefix === undefined) list.addAddress(ip, type)
    else if (/^\d+$/.test(prefix)) list.addSubnet(ip, Number(prefix), type)
    else list.addSubnet(ip, maskBits(prefix), 'ipv4')
  }
  return (address) => {
    const v4 = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address
    return list.check(v4, isIPv4(v4) ? 'ipv4' : 'ipv6')
  }
}

function maskBits(mask: string): number {
  return mask.split('.').reduce((bits, octet) => bits + Number(octet).toString(2).replace(/0/g, '').length, 0)
}

/**
 * Caps the open connections one remote (socket) address may hold: past `max`, a new connection is
 * destroyed at once, before a byte of it is parsed. Closed sockets give their slot back. Trusted
 * proxies are exempt: every client behind them shares their address.
 */
export function installConnectionCap(
  server: Server,
  opts: { max: number; exempt: (address: string) => boolean; logger?: Pick<Logger, 'warn'> },
): { open(address: string): number } {
  const open = new Map<string, number>()
  let lastWarn = 0
  server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress
    if (ip === undefined) return
    const n = (open.get(ip) ?? 0) + 1
    if (n > opts.max && !opts.exempt(ip)) {
      socket.destroy()
      const now = Date.now()
      if (now - lastWarn > 10_000) {
        lastWarn = now
        opts.logger?.warn({ ip, max: opts.max }, 'connection refused: too many open connections from one address')
      }
      return
    }
    open.set(ip, n)
    socket.once('close', () => {
      const left = (open.get(ip) ?? 1) - 1
      if (left <= 0) open.delete(ip)
      else open.set(ip, left)
    })
  })
  return { open: (address) => open.get(address) ?? 0 }
}
