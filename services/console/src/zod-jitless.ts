/**
 * Imported first by main.tsx: zod (the live channel's payload schemas) must never probe
 * `new Function` — the console's CSP has no 'unsafe-eval', and Chromium reports the probe
 * as a policy violation even though zod catches it.
 */
import { config } from 'zod';

config({ jitless: true });
