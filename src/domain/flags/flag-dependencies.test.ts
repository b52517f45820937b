import { test } from 'node:test'
import assert from 'node:assert/strict'
import { findBrokenDependencies } from './flag-dependencies.ts'

test('an acyclic dependency chain has no broken flags', () => {
  assert.deepEqual([...findBrokenDependencies([[1], [2], []])], [])
})

test('flags in a cycle and their dependents are broken, others are not', () => {
  // 0 -> 1 -> 2 -> 1 (cycle of 1 and 2), 3 independent, 4 -> 0
  const broken = findBrokenDependencies([[1], [2], [1], [], [0]])
  assert.deepEqual([...broken].sort(), [0, 1, 2, 4])
})

test('a missing dependency breaks the flag and its dependents', () => {
  const broken = findBrokenDependencies([[-1], [0], []])
  assert.deepEqual([...broken].sort(), [0, 1])
})

test('a self-dependency is a cycle', () => {
  assert.deepEqual([...findBrokenDependencies([[0]])], [0])
})

test('a dependent visited after its broken dependency finished is broken too', () => {
  const broken = findBrokenDependencies([[-1], [], [0]])
  assert.deepEqual([...broken].sort(), [0, 2])
})
