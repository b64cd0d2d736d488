#!/usr/bin/env node
// The `flowline` executable: registers tsx (the repo runs TypeScript without a build
// step) and loads the TypeScript entry point.
import { register } from 'tsx/esm/api';

register();
await import('../src/bin.ts');
