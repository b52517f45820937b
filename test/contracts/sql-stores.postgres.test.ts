import { describe } from 'node:test'
import { TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'
import { runSqlStoreContracts } from './sql-contracts.ts'

// The Node side runs in a zone with a half-hour offset, the database session in Pacific/Chatham
// (+12:45/+13:45): a timestamp that loses its zone anywhere between them shows up as a changed instant.
process.env.TZ = 'America/St_Johns'

// Every metadata store contract on a PostgreSQL server: one new database for this file, emptied
// between tests. Skipped only when TEST_POSTGRES_URL is unset (CI sets it).
describe('postgres', { skip: TEST_POSTGRES_URL ? false : 'TEST_POSTGRES_URL not set' }, () => {
  runSqlStoreContracts('postgres')
})
