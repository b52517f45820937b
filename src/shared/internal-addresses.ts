import { BlockList, isIP } from 'node:net'

/**
 * Addresses that are not on the public internet: loopback, private, link-local (the cloud metadata
 * service at 169.254.169.254 among them), shared (CGNAT), benchmarking, multicast, reserved and
 * unspecified ranges, IPv4 and IPv6. Outgoing webhooks refuse them; GeoIP gives them no location.
 */
const INTERNAL_V4 = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4']
const INTERNAL_V6 = ['::/128', '::1/128', 'fc00::/7', 'fe80::/10', 'ff00::/8', '64:ff9b::/96', '2001:db8::/32']

const internal = (() => {
  const list = new BlockList()
  for (const cidr of INTERNAL_V4) list.addSubnet(cidr.split('/')[0]!, Number(cidr.split('/')[1]), 'ipv4')
  for (const cidr of INTERNAL_V6) list.addSubnet(cidr.split('/')[0]!, Number(cidr.split('/')[1]), 'ipv6')
  return list
})()

/** The address as checked: IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is its IPv4 address; null when not an IP. */
export function plainAddress(address: string): { address: string; type: 'ipv4' | 'ipv6' } | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  const addr = mapped ? mapped[1]! : address
  const family = isIP(addr)
  if (family === 0) return null
  return { address: addr, type: family === 4 ? 'ipv4' : 'ipv6' }
}

const IPV4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/i

/** The ranges above for IPv4 as [first, last] 32-bit numbers: checked without allocating (GeoIP asks per event). */
const INTERNAL_V4_RANGES = INTERNAL_V4.map((cidr) => {
  const [addr, bits] = cidr.split('/')
  const first = ipv4Number(addr!)!
  const size = 2 ** (32 - Number(bits))
  return [first, first + size - 1] as const
})

function ipv4Number(address: string): number | null {
  const m = IPV4.exec(address)
  if (!m) return null
  let n = 0
  for (let i = 1; i <= 4; i++) {
    const octet = Number(m[i])
    if (octet > 255) return null
    n = n * 256 + octet
  }
  return n
}

/** True for an address in one of the ranges above (a text that is no IP address is not internal). */
export function isInternalAddress(address: string): boolean {
  const v4 = ipv4Number(address)
  if (v4 !== null) {
    for (const [first, last] of INTERNAL_V4_RANGES) if (v4 >= first && v4 <= last) return true
    return false
  }
  const plain = plainAddress(address)
  return plain !== null && internal.check(plain.address, plain.type)
}
