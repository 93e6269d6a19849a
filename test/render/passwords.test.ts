/**
 * No cleartext password leaves through any renderer once the policy is applied: credentials whose
 * `hash` is the password (hash_type plaintext, unknown or null) go through `masked` and `hidden`,
 * then through every renderer, and the serialized output is searched for each original password.
 */
import { describe, expect, it } from 'vitest';
import type { DeliveryAlert } from '../../lib/model.ts';
import type { DestinationConfig } from '../../lib/rules/config.ts';
import { applyPasswordPolicy } from '../../lib/rules/passwords.ts';
import {
  credentialAlert,
  makeCredential,
  type RenderTarget,
  renderOptions,
  renderTo,
  toDelivery,
} from './fixtures.ts';

const PASSWORDS = [
  'Summer2024!',
  'hunter2hunter2',
  'correct horse battery',
  'P@ssw0rd#99',
  'ünïcødé-pass',
  'dragon',
];
const HASH_TYPES = ['plaintext', 'unknown', null] as const;

const credentials = PASSWORDS.flatMap((password, i) =>
  HASH_TYPES.map((hash_type, j) =>
    makeCredential({
      identity_name: `person${i}.${j}@${i % 2 ? 'example.com' : 'acme.test'}`,
      domain: i % 2 ? 'example.com' : 'acme.test',
      source_id: `src-${i % 3}`,
      hash: password,
      hash_type,
    }),
  ),
);

const destinations: Record<string, DestinationConfig> = {
  slack: { type: 'slack', url: 'https://hooks.slack.example/x' },
  email: {
    type: 'email',
    provider: 'generic',
    url: 'https://mail.example/send',
    from: 'a@example.com',
    to: ['b@example.com'],
  },
  webhook: { type: 'webhook', url: 'https://siem.example/in' },
  console: { type: 'console' },
};

async function renderAll(alerts: DeliveryAlert[], threshold: number): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, destination] of Object.entries(destinations)) {
    for (const color of [false, true]) {
      const rendered = await renderTo(
        destination as RenderTarget,
        alerts,
        renderOptions({ digest: { threshold, maxItems: 45 } }),
        { color },
      );
      // Email: subject, text and HTML are all in the serialization; so are Slack blocks and webhook items.
      out[`${name} color=${color}`] = rendered
        .map((r) => `${JSON.stringify(r.payload)}\n${r.summary}`)
        .join('\n');
    }
  }
  return out;
}

describe('password policy through every renderer', () => {
  for (const policy of ['masked', 'hidden'] as const) {
    for (const threshold of [1_000, 5]) {
      const mode = threshold === 5 ? 'digest' : 'grouped';
      it(`${policy}, ${mode}: no original password appears in any output`, async () => {
        const alerts = credentials.map((c) => toDelivery(credentialAlert(applyPasswordPolicy(c, policy))));
        const outputs = await renderAll(alerts, threshold);
        expect(Object.keys(outputs)).toHaveLength(8);
        for (const [where, text] of Object.entries(outputs)) {
          for (const password of PASSWORDS) {
            expect(text.includes(password), `${password} in ${where}`).toBe(false);
            expect(
              text.includes(JSON.stringify(password).slice(1, -1)),
              `${password} JSON-escaped in ${where}`,
            ).toBe(false);
          }
          for (const c of credentials)
            expect(text, `${where} still names the login`).toContain(c.identity_name.split('@')[0]);
        }
        if (policy === 'masked') {
          // The test is not vacuous: the masked form does reach the webhook and the console.
          expect(outputs['webhook color=false']).toContain('S*********!');
          expect(outputs['console color=false']).toContain('S*********!');
        } else {
          expect(outputs['webhook color=false']).not.toContain('"hash"');
        }
      });
    }
  }

  it('the same dataset without the policy would leak (the search works)', async () => {
    const alerts = credentials.map((c) => toDelivery(credentialAlert(c)));
    expect((await renderAll(alerts, 1_000))['webhook color=false']).toContain('hunter2hunter2');
  });
});
