import { runSqlStoreContracts } from './sql-contracts.ts'

// Every metadata store contract on embedded PGlite (one in-memory database, emptied between tests).
runSqlStoreContracts('pglite')
