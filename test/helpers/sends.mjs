// A preload that notes when this process sends each request through `fetch` (the upstream
// client's): `node --import=<this file> ...` appends `<ms since the epoch> <method> <url>` to
// the file EA_TEST_SENDS_FILE names, at the moment the request is handed to fetch. What the
// product sent, when it sent it: a measure of its pacing that no busy machine can blur, unlike
// arrival times read by a server whose event loop may run late.
import { appendFileSync } from 'node:fs';

const file = process.env.EA_TEST_SENDS_FILE;
const original = globalThis.fetch;

if (file) {
  globalThis.fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
    appendFileSync(file, `${Date.now()} ${method} ${url}\n`);
    return original(input, init);
  };
}
