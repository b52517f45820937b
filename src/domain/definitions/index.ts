export * from './property-type.ts'
export * from './collect-definitions.ts'
