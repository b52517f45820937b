#!/usr/bin/env node
// The `tally` command: the compiled server in dist/ (built by `npm run build`, which `npm ci` runs as `prepare`).
import '../dist/main.js'
