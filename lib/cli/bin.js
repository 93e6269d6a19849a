#!/usr/bin/env node
// The installed `exposure-alerts` command: registers tsx so the TypeScript sources run as they are.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
