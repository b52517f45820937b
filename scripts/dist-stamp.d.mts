export const ROOT: string
export const DIST_MAIN: string
export function sourceHash(): string
export function writeStamp(hash: string): void
export function distStaleness(): string | null
