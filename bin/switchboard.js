#!/usr/bin/env node
// The switchboard command. Node ≥ 22.12 runs the TypeScript sources directly (type stripping).
import { main } from '../cli/index.ts';

await main(process.argv);
