/** The catalog as the API reads it: each follow-up target with how it hears of actions. */
import { describe, expect, it } from 'vitest';
import { CatalogStore } from '../../lib/state/catalog.ts';

describe('CatalogStore.from, follow-up targets', () => {
  it('reads each target with its style, and one written before targets said their style', () => {
    const catalog = CatalogStore.from({
      followUps: [
        { name: 'app', style: 'message' },
        { name: 'pager', style: 'incident' },
        { name: 'tickets', style: 'ticket' },
        { name: 'hook', style: 'action' },
        // Written by a poller of the version before: a flag for incidents, one for tickets.
        { name: 'old-pager', pagerduty: true },
        { name: 'old-tickets', pagerduty: false, ticket: true },
        { name: 'old-app', pagerduty: false },
        { style: 'message' },
      ],
    });
    expect(catalog?.followUps).toEqual([
      { name: 'app', style: 'message' },
      { name: 'pager', style: 'incident' },
      { name: 'tickets', style: 'ticket' },
      { name: 'hook', style: 'action' },
      { name: 'old-pager', style: 'incident' },
      { name: 'old-tickets', style: 'ticket' },
      { name: 'old-app', style: 'message' },
    ]);
  });
});
