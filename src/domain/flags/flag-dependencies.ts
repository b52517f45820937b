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
