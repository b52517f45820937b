import { test } from 'node:test'
import assert from 'node:assert/strict'
import { dependencyChain, dependencyGraph, findBrokenDependencies, withDependents } from './flag-dependencies.ts'

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

const node = (id: number, key: string, deps: Array<number | string> = []) => ({
  id,
  key,
  filters: { groups: [{ properties: deps.map((d) => ({ key: String(d), type: 'flag', value: true, operator: 'flag_evaluates_to' })) }] },
})

test('the dependency graph resolves a reference by id first, then by key; unknown references are -1', () => {
  assert.deepEqual(dependencyGraph([node(1, 'a', [2, 'c']), node(2, 'b'), node(3, 'c', ['nope'])]), [[1, 2], [], [-1]])
})

test('withDependents adds every flag that reaches a seed, through others too', () => {
  const graph = dependencyGraph([node(1, 'a', [2]), node(2, 'b', [3]), node(3, 'c'), node(4, 'd')])
  assert.deepEqual([...withDependents(graph, [2])].sort(), [0, 1, 2])
})

test('a dependency chain lists dependencies first and ends with the flag; null on a cycle or a missing flag', () => {
  const graph = dependencyGraph([node(1, 'a', [2, 3]), node(2, 'b', [3]), node(3, 'c'), node(4, 'd', [5]), node(5, 'e', [4]), node(6, 'f', [99])])
  assert.deepEqual(dependencyChain(graph, 0), [2, 1, 0])
  assert.equal(dependencyChain(graph, 3), null)
  assert.equal(dependencyChain(graph, 5), null)
})
