import { flagFilters } from './flag-filters.ts'
import type { FlagFilters } from './flag-types.ts'

/**
 * Finds the flags whose dependencies cannot be resolved: those depending on a missing flag
 * (edge `-1`), those inside a dependency cycle, and everything that depends on either.
 * PostHog's flags service evaluates these as `false` with reason `missing_dependency` and sets
 * `errorsWhileComputingFlags`. Runs in O(flags + edges).
 */
export function findBrokenDependencies(dependencies: readonly (readonly number[])[]): Set<number> {
  const broken = new Set<number>()
  const state = new Uint8Array(dependencies.length) // 0 new, 1 on stack, 2 done
  for (let start = 0; start < dependencies.length; start++) {
    if (state[start] === 0) visit(start)
  }
  return broken

  // Iterative DFS: a deep dependency chain must not overflow the call stack.
  function visit(root: number): void {
    const stack: { node: number; next: number }[] = [{ node: root, next: 0 }]
    state[root] = 1
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]
      const edges = dependencies[frame.node]
      if (frame.next < edges.length) {
        const dep = edges[frame.next++]
        if (dep < 0) {
          broken.add(frame.node)
        } else if (state[dep] === 1) {
          // A cycle: every flag from `dep` up to the top of the stack is part of it.
          for (let i = stack.length - 1; i >= 0; i--) {
            broken.add(stack[i].node)
            if (stack[i].node === dep) break
          }
        } else if (state[dep] === 0) {
          state[dep] = 1
          stack.push({ node: dep, next: 0 })
        } else if (broken.has(dep)) {
          broken.add(frame.node)
        }
        continue
      }
      state[frame.node] = 2
      stack.pop()
      if (broken.has(frame.node) && stack.length > 0) broken.add(stack[stack.length - 1].node)
    }
  }
}

/** What the dependency helpers need of a flag. */
export interface FlagNode {
  id: number
  key: string
  filters: FlagFilters
}

/**
 * Resolves a flag-dependency reference to an index into `flags`: PostHog stores the dependency's
 * id in the filter's `key`, and its local-evaluation endpoint rewrites it to the flag key, so both
 * are accepted (the id first).
 */
export function flagRefResolver(flags: readonly { id: number | string; key: string }[]): (ref: unknown) => number | undefined {
  const byId = new Map<string, number>()
  const byKey = new Map<string, number>()
  flags.forEach((f, i) => {
    byId.set(String(f.id), i)
    byKey.set(f.key, i)
  })
  return (ref) => byId.get(String(ref)) ?? byKey.get(String(ref))
}

/** Each flag's dependencies as indexes into `flags`, `-1` where a reference names no flag. */
export function dependencyGraph(flags: readonly FlagNode[]): number[][] {
  const resolve = flagRefResolver(flags)
  return flags.map((f) =>
    flagFilters(f.filters)
      .filter(({ filter }) => filter.type === 'flag')
      .map(({ filter }) => resolve(filter.key) ?? -1),
  )
}

/** The flags that depend on one of `seeds`, directly or through other flags, and the seeds themselves. */
export function withDependents(graph: readonly (readonly number[])[], seeds: Iterable<number>): Set<number> {
  const dependents: number[][] = graph.map(() => [])
  graph.forEach((deps, i) => deps.forEach((d) => d >= 0 && dependents[d]!.push(i)))
  const out = new Set<number>(seeds)
  const stack = [...out]
  while (stack.length > 0) {
    for (const next of dependents[stack.pop()!]!) {
      if (!out.has(next)) {
        out.add(next)
        stack.push(next)
      }
    }
  }
  return out
}

/**
 * The flags `index` needs in evaluation order (dependencies first), ending with `index` itself;
 * null when it depends, directly or not, on a missing flag or sits on a cycle. Pass `broken`
 * (from {@link findBrokenDependencies}) when asking for many flags of one graph.
 */
export function dependencyChain(
  graph: readonly (readonly number[])[],
  index: number,
  broken: ReadonlySet<number> = findBrokenDependencies(graph),
): number[] | null {
  return broken.has(index) ? null : postOrder(graph, index)
}

function postOrder(graph: readonly (readonly number[])[], root: number): number[] {
  const chain: number[] = []
  const seen = new Set<number>([root])
  const stack: { node: number; next: number }[] = [{ node: root, next: 0 }]
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    const deps = graph[frame.node]!
    if (frame.next < deps.length) {
      const dep = deps[frame.next++]!
      if (!seen.has(dep)) {
        seen.add(dep)
        stack.push({ node: dep, next: 0 })
      }
      continue
    }
    chain.push(frame.node)
    stack.pop()
  }
  return chain
}
