import { createSqlActionStore } from '../../src/storage/sql/sql-action-store.ts'
import { createSqlCohortStore } from '../../src/storage/sql/sql-cohort-store.ts'
import { createSqlDashboardStore } from '../../src/storage/sql/sql-dashboard-store.ts'
import { createSqlFeatureFlagStore } from '../../src/storage/sql/sql-feature-flag-store.ts'
import { createSqlGroupTypeStore } from '../../src/storage/sql/sql-group-type-store.ts'
import { createSqlIngestionGroupStore, createSqlIngestionPersonStore } from '../../src/storage/sql/sql-ingestion-person-store.ts'
import { createSqlInsightStore } from '../../src/storage/sql/sql-insight-store.ts'
import { createSqlPersonDataStore } from '../../src/storage/sql/sql-person-data-store.ts'
import { createSqlProjectStore } from '../../src/storage/sql/sql-project-store.ts'
import { actionStoreContract } from './action-store.contract.ts'
import { authStoreContract } from './auth-store.contract.ts'
import { createSqlAuthStore } from '../../src/storage/sql/sql-auth-store.ts'
import { cohortStoreContract } from './cohort-store.contract.ts'
import { dashboardStoreContract } from './dashboard-store.contract.ts'
import { featureFlagStoreContract } from './feature-flag-store.contract.ts'
import { groupTypeStoreContract } from './group-type-store.contract.ts'
import { countingSqlClient, ingestionGroupStoreContract, ingestionPersonStoreContract } from './ingestion-person-store.contract.ts'
import { insightStoreContract } from './insight-store.contract.ts'
import { personDataStoreContract } from './person-data-store.contract.ts'
import { projectStoreContract } from './project-store.contract.ts'
import { personApiStoreContract } from './person-store.contract.ts'
import { createSqlPersonStore } from '../../src/storage/sql/sql-person-store.ts'
import { createSqlGroupStore } from '../../src/storage/sql/sql-group-store.ts'
import { sharedSqlDatabase } from './sql-harness.ts'
import { definitionStoreContract } from './definition-store.contract.ts'
import { createSqlDefinitionStore } from '../../src/storage/sql/sql-definition-store.ts'
import type { SqlClient } from '../../src/storage/sql/sql-client.ts'
import { createSqlRecordingBlobStore } from '../../src/storage/sql/sql-recording-blob-store.ts'
import { recordingBlobStoreContract } from './recording-blob-store.contract.ts'

/** Every metadata store contract on one engine; each runner file calls this once. */
export function runSqlStoreContracts(engine: 'pglite' | 'postgres'): void {
  const db = sharedSqlDatabase(engine)
  projectStoreContract(engine, db.openEmpty(createSqlProjectStore))
  dashboardStoreContract(engine, db.openWithWorld(createSqlDashboardStore))
  authStoreContract(engine, db.openWithWorld(createSqlAuthStore))
  insightStoreContract(engine, db.openWithWorld((q) => ({ insights: createSqlInsightStore(q), dashboards: createSqlDashboardStore(q) })))
  actionStoreContract(engine, db.openWithWorld(createSqlActionStore))
  featureFlagStoreContract(engine, db.openWithWorld(createSqlFeatureFlagStore))
  cohortStoreContract(engine, db.openWithWorld((q) => ({ cohorts: createSqlCohortStore(q), persons: createSqlPersonDataStore(q) })))
  groupTypeStoreContract(engine, db.openWithWorld(createSqlGroupTypeStore))
  definitionStoreContract(engine, db.openWithWorld(createSqlDefinitionStore))
  personDataStoreContract(engine, db.openWithWorld((q) => ({ persons: createSqlPersonDataStore(q), cohorts: createSqlCohortStore(q) })))
  const ingestionPorts = (q: SqlClient) => {
    const statements = { count: 0 }
    const counted = countingSqlClient(q, statements)
    return { store: createSqlIngestionPersonStore(counted), groups: createSqlIngestionGroupStore(counted), reader: createSqlPersonDataStore(q), statements }
  }
  ingestionPersonStoreContract(engine, db.openWithWorld(ingestionPorts))
  ingestionGroupStoreContract(engine, db.openWithWorld(ingestionPorts))
  recordingBlobStoreContract(engine, (files) => db.openWithWorld((q) => (appendTo: 'database' | 'files') => createSqlRecordingBlobStore(q, files, appendTo))())
  personApiStoreContract(engine, db.openWithWorld((q) => ({
    persons: createSqlPersonStore(q), groups: createSqlGroupStore(q), writer: createSqlIngestionPersonStore(q), groupWriter: createSqlIngestionGroupStore(q), data: createSqlPersonDataStore(q),
  })))
}
