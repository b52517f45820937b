import assert from 'node:assert/strict'
import { test } from 'node:test'
import { toCsv } from './action-csv.ts'

test('toCsv flattens nested values into dotted columns in first-seen order', () => {
  const csv = toCsv([
    { id: 1, steps: [{ event: 'a' }], by: { email: 'x@y' } },
    { id: 2, steps: [{ event: 'b' }, { event: 'c' }], by: null },
  ])
  assert.equal(csv, 'id,steps.0.event,by.email,steps.1.event,by\r\n1,a,x@y,,\r\n2,b,,c,\r\n')
})

test('toCsv writes booleans as Python does, quotes delimiters and doubles quotes', () => {
  assert.equal(toCsv([{ a: true, b: false, c: 'x,"y"', d: null }]), 'a,b,c,d\r\nTrue,False,"x,""y""",\r\n')
})

test('toCsv writes the given header when there are no rows', () => {
  assert.equal(toCsv([], ['id', 'name']), 'id,name\r\n')
})
