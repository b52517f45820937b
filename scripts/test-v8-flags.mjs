// Preloaded into each test process by run-tests.mjs (`--import`): compiles WebAssembly with V8's
// baseline compiler (Liftoff) only, without the optimising tier-up (TurboFan) in background threads.
// PGlite's PostgreSQL is WebAssembly and every test process starts its own; a test process is too
// short for the optimised code to pay back its compilation (measured in the commit that added this).
// The flag changes how the same code is compiled, never what it computes. Set here rather than as a
// command-line flag: worker threads refuse V8 flags in their execArgv (the decode pool passes its own).
import v8 from 'node:v8'
import { isMainThread } from 'node:worker_threads'

if (isMainThread) v8.setFlagsFromString('--liftoff-only')
