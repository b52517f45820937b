import { createSqlFeatureFlagStore } from '../../src/storage/sql/sql-feature-flag-store.ts'
import { featureFlagStoreContract } from './feature-flag-store.contract.ts'
import { sharedSqlDatabase } from './sql-harness.ts'

/** Every metadata store contract on one engine; each runner file calls this once. */
export function runSqlStoreContracts(engine: 'pglite' | 'postgres'): void {
  const db = sharedSqlDatabase(engine)
  featureFlagStoreContract(engine, db.openWithWorld(createSqlFeatureFlagStore))
}
