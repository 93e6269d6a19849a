/**
 * ServiceNow incidents from hostile upstream text: a one-line short description, a plain
 * description, a digest within bounds whose every listed line links its item.
 */
import { describe, expect, it } from 'vitest';
import { renderServiceNow } from '../../../lib/destinations/servicenow/render.ts';
import { alertLink } from '../../../lib/render/link.ts';
import { credentialAlert, eventAlert, renderOptions, toDelivery } from '../../render/fixtures.ts';
import { hostileCredential, hostileDigest, hostileEvent } from '../../render/hostile.ts';

describe('renderServiceNow', () => {
  it('hostile text: one short line of at most 160 characters, controls out, the correlation_id a label', () => {
    const [incident] = renderServiceNow(
      [toDelivery(eventAlert(hostileEvent(1)), 'itsm')],
      renderOptions({ destination: 'itsm' }),
    );
    const fields = incident?.payload;
    expect(fields?.short_description.length).toBeLessThanOrEqual(160);
    expect(fields?.short_description).not.toMatch(/[\r\n\u0000-\u001f]/);
    expect(fields?.description).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
    expect(fields?.correlation_id).toMatch(/^exposure-[0-9a-f]{16}$/);
    expect(['1', '2', '3']).toContain(fields?.urgency);
  });

  it('a digest: one incident, what fits listed and the rest counted', () => {
    const alerts = Array.from({ length: 1_000 }, (_, i) =>
      toDelivery(credentialAlert(hostileCredential(i)), 'itsm'),
    );
    const incidents = renderServiceNow(
      alerts,
      renderOptions({ destination: 'itsm', digest: { threshold: 5, maxItems: 20 } }),
    );
    expect(incidents.flatMap((i) => i.deliveryIds)).toHaveLength(1_000);
    for (const i of incidents) expect(i.payload.description.length).toBeLessThan(21_000);
  });

  it('a digest: each listed line ends with its item’s link', () => {
    const alerts = hostileDigest('itsm');
    const incidents = renderServiceNow(
      alerts,
      renderOptions({ destination: 'itsm', digest: { threshold: 5, maxItems: 20 } }),
    );
    expect(incidents).toHaveLength(2);
    for (const incident of incidents) {
      const own = alerts.filter((a) => incident.deliveryIds.includes(a.deliveryId));
      const lines = incident.payload.description.split('\n').slice(1);
      expect(lines).toHaveLength(own.length);
      own.forEach((a, i) => {
        expect(lines[i]?.endsWith(` · ${alertLink(a, 'https://app.example.test')}`)).toBe(true);
      });
    }
  });
});
