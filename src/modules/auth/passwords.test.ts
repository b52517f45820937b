import assert from 'node:assert/strict'
import { test } from 'node:test'
import { hashPassword, verifyPassword } from './passwords.ts'

test('passwords: scrypt with a salt per hash; only the same password verifies; malformed hashes are false', async () => {
  const a = await hashPassword('correct horse')
  const b = await hashPassword('correct horse')
  assert.match(a, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
  assert.notEqual(a, b, 'a fresh salt each time')
  assert.equal(await verifyPassword('correct horse', a), true)
  assert.equal(await verifyPassword('correct horse', b), true)
  assert.equal(await verifyPassword('correct horsf', a), false)
  assert.equal(await verifyPassword('', a), false)
  for (const bad of [null, '', 'plain', 'scrypt$1$2', 'md5$a$b$c$d$e']) assert.equal(await verifyPassword('correct horse', bad), false, String(bad))
})

test('passwords: many hashes at once all complete (at most two run at a time, the rest wait their turn)', async () => {
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => hashPassword(`password ${i}`)))
  assert.equal(new Set(results).size, 8)
  assert.equal(await verifyPassword('password 7', results[7]!), true)
})
