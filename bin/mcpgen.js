#!/usr/bin/env node
// Entry of the `mcpgen` command: the compiled CLI in dist/ (built by `npm run build`, and by
// `prepare` on `npm install` / `npm ci`).
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
