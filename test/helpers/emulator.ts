/** Starts a real emulator over HTTP for a test file, and builds clients against it. */
import { afterAll, beforeAll } from 'vitest';
import { type EmulatorOptions, type RunningEmulator, startEmulator } from '../../lib/emulator/index.ts';
import { staticToken } from '../../lib/upstream/auth.ts';
import { UpstreamClient, type UpstreamClientOptions } from '../../lib/upstream/client.ts';

export interface EmulatorFixture {
  readonly running: RunningEmulator;
  readonly url: string;
  client(token?: string, options?: Partial<UpstreamClientOptions>): UpstreamClient;
}

export function useEmulator(options: EmulatorOptions = {}): EmulatorFixture {
  let running: RunningEmulator | undefined;
  beforeAll(async () => {
    // Unlimited rate unless a test asks (`rateLimits: 'real'`): a test of something else must not
    // meet a 429 because its suite runs fast.
    running = await startEmulator({ seed: 7, rateLimits: 'off', ...options });
  });
  afterAll(async () => {
    await running?.close();
  });
  const get = () => {
    if (!running) throw new Error('emulator not started');
    return running;
  };
  return {
    get running() {
      return get();
    },
    get url() {
      return get().url;
    },
    client(token = 'emu-acme-token', extra = {}) {
      return new UpstreamClient({
        baseUrl: get().url,
        auth: staticToken(token),
        backoffBaseMs: 10,
        backoffMaxMs: 50,
        ...extra,
      });
    },
  };
}
