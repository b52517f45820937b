/**
 * A table looked up by names that come from requests (query kinds, select entries, units, orderings):
 * an object with no prototype, frozen, so `constructor`, `__proto__`, `toString` or `hasOwnProperty`
 * find nothing instead of Object.prototype's members. A plain object literal would answer them
 * (`kinds['constructor']` is `Object`).
 */
export function lookupTable<T>(entries: Readonly<Record<string, T>>): Readonly<Record<string, T | undefined>> {
  const table = Object.create(null) as Record<string, T>
  for (const key of Object.keys(entries)) table[key] = entries[key]!
  return Object.freeze(table)
}

/** `table[key]` when `key` is the table's own entry; undefined otherwise (whatever the table's prototype). */
export function lookUp<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined
}
