import { runSqlStoreContracts } from './sql-contracts.ts'

// Node in a zone with a half-hour offset, the database session in Pacific/Chatham (see sql-harness.ts).
process.env.TZ = 'Asia/Kolkata'

// Every metadata store contract on embedded PGlite (one in-memory database, emptied between tests).
runSqlStoreContracts('pglite')
