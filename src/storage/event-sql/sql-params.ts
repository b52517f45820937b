/**
 * The values of one statement. `add` returns what stands for the value in SQL: a positional
 * placeholder (`$1`, DuckDB) or, for an engine without bound parameters, the value as an escaped
 * literal. Either way user values reach SQL only through `add`, never spliced by the layer.
 */
export interface SqlParams {
  readonly values: (string | number | boolean)[]
  /** Binds a value and returns its placeholder. */
  add(value: string | number | boolean): string
}

/** Positional parameters (`$1`, `$2`...), bound by the driver. */
export function createSqlParams(): SqlParams {
  const values: (string | number | boolean)[] = []
  return {
    values,
    add(value) {
      values.push(value)
      return `$${values.length}`
    },
  }
}
