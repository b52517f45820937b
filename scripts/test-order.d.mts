export function orderByDuration(files: readonly string[], durations: Readonly<Record<string, number>>): string[]
export function mergeDurations(old: Readonly<Record<string, number>>, measured: Readonly<Record<string, number>>, existing: readonly string[]): Record<string, number>
