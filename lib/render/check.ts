/**
 * Renders the built-in samples through every destination of a config, the way a delivery pass
 * would (one message per item, then a digest, then a test notice), and reports what would fail at
 * run time: a renderer that throws, a Slack message over a limit, a Teams card over 28,000 bytes
 * or with upstream text where Markdown renders, a PagerDuty event PagerDuty would refuse, a mail
 * with an empty or multi-line subject, a password that survives the policy. `config validate` prints these as errors,
 * so template problems show up before deploying, not after alerts were dropped.
 */
import { bodyOf, kindOptions, previewDestination } from '../destinations/kinds.ts';
import type { DeliveryAlert } from '../model.ts';
import type { AlertsConfig } from '../rules/config.ts';
import { applyPasswordPolicy } from '../rules/passwords.ts';
import { renderFor } from './lazy.ts';
import { SAMPLE_PASSWORD, sampleCredential, sampleEvent, sampleHostileEvent } from './samples.ts';
import type { RenderOptions } from './types.ts';

/**
 * Most items a sample digest lists. Past a few hundred a digest only gets longer, not different:
 * Slack lists what fits its limits whatever the count, e-mail and the console one line an item.
 * Rendering maxItems + 5 hostile samples for maxItems 100,000 took minutes; this keeps `config
 * validate` under about a second for any maxItems.
 */
export const SAMPLE_DIGEST_MAX = 500;

/** Problems found rendering samples for each destination, each line starting `destinations.<name>:`. */
export async function checkRendering(
  config: AlertsConfig,
  options: { appUrl: string; now: Date; render?: typeof renderFor },
): Promise<string[]> {
  const { now, appUrl, render = renderFor } = options;
  const errors: string[] = [];
  const credential = applyPasswordPolicy(sampleCredential(now), config.passwords);
  for (const [name, configured] of Object.entries(config.destinations)) {
    const destination = previewDestination(name, configured);
    const body = await bodyOf(destination);
    const problemsOf = (payload: unknown) => body.problems?.(payload) ?? [];
    const routes = config.routes.filter((r) => r.to.includes(name)).map((r) => r.name);
    const deliver = (
      alert: Omit<DeliveryAlert, 'deliveryId' | 'destination' | 'routes'>,
      n = 0,
    ): DeliveryAlert =>
      ({
        ...alert,
        deliveryId: `${name}~${alert.kind}~${alert.key}${n ? `#${n}` : ''}`,
        destination: name,
        routes: routes.length ? routes : ['(sample)'],
      }) as DeliveryAlert;
    const event = deliver({ kind: 'event', key: 'sample-event', source: 'tenant', item: sampleEvent(now) });
    const hostile = deliver({
      kind: 'event',
      key: 'sample-hostile',
      source: 'tenant',
      item: sampleHostileEvent(now),
    });
    const login = deliver({
      kind: 'credential',
      key: String(credential.id),
      source: 'credentials:example.com',
      item: credential,
    });
    // With the options the kind gets in a run (Slack's buttons with `actions.slack`), no colours.
    const opts: RenderOptions = {
      destination: name,
      appUrl,
      digest: config.digest,
      now,
      kindOptions: kindOptions(destination, { actions: config.actions }),
    };
    // Past the threshold whatever it is set to, with more items than a digest lists.
    const sampleDigest = { threshold: 1, maxItems: Math.min(config.digest.maxItems, SAMPLE_DIGEST_MAX) };
    const many = Array.from({ length: sampleDigest.maxItems + 5 }, (_, i) => [
      deliver({ ...hostile, key: `sample-hostile-${i}` }, i + 1),
      deliver({ ...login, key: `sample-login-${i}` }, i + 1),
    ]).flat();
    const cases: [string, DeliveryAlert[], RenderOptions][] = [
      [
        'sample event',
        [event],
        { ...opts, digest: { ...config.digest, threshold: Number.MAX_SAFE_INTEGER } },
      ],
      [
        'hostile sample event',
        [hostile],
        { ...opts, digest: { ...config.digest, threshold: Number.MAX_SAFE_INTEGER } },
      ],
      [
        'sample credential',
        [login],
        { ...opts, digest: { ...config.digest, threshold: Number.MAX_SAFE_INTEGER } },
      ],
      ['sample digest', many, { ...opts, digest: sampleDigest }],
    ];
    const report = (what: string, problem: string) =>
      errors.push(`destinations.${name}: ${what} (${destination.type}): ${problem}`);
    for (const [what, alerts, caseOpts] of cases) {
      try {
        const rendered = await render(destination, alerts, caseOpts);
        const covered = rendered.flatMap((r) => r.deliveryIds).sort();
        const expected = alerts.map((a) => a.deliveryId).sort();
        if (covered.join('\n') !== expected.join('\n'))
          report(what, 'messages do not cover every item exactly once');
        for (const r of rendered) {
          // A digest to a Slack app: its thread's replies are checked as the parent is.
          for (const [part, payload] of [r.payload, ...(r.thread ?? [])].entries()) {
            const where = part ? `${what}, thread reply ${part}` : what;
            for (const problem of problemsOf(payload)) report(where, problem);
            if (config.passwords !== 'clear' && JSON.stringify(payload).includes(SAMPLE_PASSWORD)) {
              report(where, `the sample password survives the "${config.passwords}" policy`);
            }
          }
        }
      } catch (error) {
        report(what, `rendering failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    // What a follow-up posts (an edit, a thread reply), for the hostile sample.
    try {
      const action = {
        id: 'sample',
        type: 'ignore',
        by: 'cli:sample',
        at: now.toISOString(),
        reason: 'sample',
      } as const;
      for (const [part, payload] of body.followUpSamples?.(destination, hostile, action, opts) ?? [])
        for (const problem of problemsOf(payload)) report(`follow-up ${part}`, problem);
    } catch (error) {
      report('follow-up', `rendering failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    try {
      const notice = body.notice(destination, { kind: 'test', title: 'Sample', text: 'Sample notice' }, opts);
      for (const problem of problemsOf(notice)) report('test notice', problem);
    } catch (error) {
      report('test notice', `rendering failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return errors;
}
