/**
 * Start the upstream emulator on a local port.
 *
 * @example
 * const emu = await startEmulator({ seed: 7 }); // unlimited rate; `rateLimits: 'real'` for 4/s and 1/s
 * // EXPOSURE_API_URL=emu.url, EXPOSURE_API_TOKEN=emu.emulator.dataset.tenant('acme').token
 * await emu.close();
 */
import { listen, type RunningServer } from '../http-server.ts';
import { Emulator, type EmulatorOptions } from './app.ts';

export { Emulator, type EmulatorOptions } from './app.ts';
export type { EndpointName, Fault, RequestLogEntry } from './control.ts';
export { DEMO_ENTRA, DEMO_IDENTITY_SECRETS, DEMO_OKTA } from './identity/demo-providers.ts';
export {
  IDENTITY_PATHS,
  IdentityStandIn,
  type IdentityStandInOptions,
  identityUrls,
} from './identity/index.ts';
export { type RateLimitOption, type RateLimits, type RateStats, REAL_RATE_LIMITS } from './limits.ts';

export interface RunningEmulator extends RunningServer {
  emulator: Emulator;
}

export async function startEmulator(
  options: EmulatorOptions & { port?: number; hostname?: string } = {},
): Promise<RunningEmulator> {
  const emulator = new Emulator(options);
  const server = await listen(emulator.app.fetch, { port: options.port, hostname: options.hostname });
  return { ...server, emulator };
}
