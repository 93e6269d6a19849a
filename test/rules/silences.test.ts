/**
 * Run-time silences as rules (lib/rules/silences.ts): what a request may hold (errors named by
 * their path, as the config's are), how `until` is read, and which silence holds an alert back.
 */
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../lib/rules/match.ts';
import {
  checkSilenceRequest,
  parseUntil,
  silencedNote,
  silenceFor,
  withSilences,
} from '../../lib/rules/silences.ts';
import { eventAlert, makeEvent } from '../render/fixtures.ts';

const NOW = Date.parse('2026-11-23T00:00:00Z');
const HOUR = 3_600_000;

describe('until', () => {
  it.each([
    ['PT4H', '2026-11-23T04:00:00.000Z'],
    ['pt30m', '2026-11-23T00:30:00.000Z'],
    ['P1D', '2026-11-24T00:00:00.000Z'],
    ['2026-12-31T18:00:00Z', '2026-12-31T18:00:00.000Z'],
    ['2026-12-31T20:00:00+02:00', '2026-12-31T18:00:00.000Z'],
    ['P366D', '2027-11-24T00:00:00.000Z'],
    // The short forms operators type from habit.
    ['4h', '2026-11-23T04:00:00.000Z'],
    ['30m', '2026-11-23T00:30:00.000Z'],
    ['1d', '2026-11-24T00:00:00.000Z'],
    ['1w', '2026-11-30T00:00:00.000Z'],
    ['1h30m', '2026-11-23T01:30:00.000Z'],
    ['2028-02-29T00:00:00Z', undefined],
  ])('%s → %s', (text, until) => {
    if (until === undefined) {
      // A leap day that exists, but beyond 366 days: refused for its distance, not its date.
      expect(parseUntil(text, NOW)).toEqual({ error: expect.stringMatching(/at most 366 days/) });
      return;
    }
    expect(parseUntil(text, NOW)).toEqual({ until });
  });

  it('a timestamp without a time zone is read as UTC, and says so', () => {
    expect(parseUntil('2026-12-31T18:00', NOW)).toEqual({
      until: '2026-12-31T18:00:00.000Z',
      warning: 'no time zone given; read as UTC (2026-12-31T18:00:00.000Z)',
    });
    expect(parseUntil('2026-12-31', NOW)).toMatchObject({ until: '2026-12-31T00:00:00.000Z' });
  });

  it.each([
    ['PT0S', /in the future/],
    ['2026-11-22T23:59:59Z', /in the future/],
    ['P367D', /at most 366 days/],
    ['2028-01-01T00:00:00Z', /at most 366 days/],
    ['tomorrow', /timestamp such as .* or a duration such as 4h or PT4H/],
    ['P4X', /duration such as PT4H/],
    // Dates that do not exist are refused, not rolled over (30 February is not 2 March).
    ['2027-02-30T00:00:00Z', /2027-02-30 does not exist: February 2027 has 28 days/],
    ['2026-11-31T00:00:00Z', /2026-11-31 does not exist: November 2026 has 30 days/],
    ['2026-12-31T24:00:00Z', /not a time of day/],
    ['2026-13-01T00:00:00Z', /13 is not a month/],
    ['2026-12-31T18:00:00+25:00', /not a time zone offset/],
    ['1M', /timestamp such as .* or a duration/],
    ['', /timestamp/],
  ])('%s is refused: %s', (text, message) => {
    const out = parseUntil(text, NOW);
    expect('error' in out && out.error).toMatch(message);
  });
});

describe('a request for a silence', () => {
  const ok = { match: { types: ['paste'] }, until: 'PT4H', reason: 'paste noise during the migration' };

  it('a good one comes back normalised', () => {
    expect(checkSilenceRequest(ok, NOW)).toEqual({
      ok: true,
      value: { match: { types: ['paste'] }, until: '2026-11-23T04:00:00.000Z', reason: ok.reason },
      warnings: [],
    });
  });

  it.each([
    [{ ...ok, match: {} }, 'match: empty, so this silence holds back every alert'],
    [
      { ...ok, match: { types: [] } },
      'match.types: an empty list matches nothing, so this silence holds nothing back',
    ],
    [{ ...ok, match: { tags: {} } }, 'match.tags: names no tag, so it imposes nothing'],
    [
      { ...ok, until: '2026-12-31T18:00' },
      'until: no time zone given; read as UTC (2026-12-31T18:00:00.000Z)',
    ],
  ])('what the contract allows is accepted, with a warning: %j', (input, warning) => {
    const out = checkSilenceRequest(input, NOW);
    expect(out.ok && out.warnings).toEqual([warning]);
  });

  it.each([
    [
      { ...ok, match: { severity: { gte: 'urgent' } } },
      'match.severity.gte: expected one of info, low, medium',
    ],
    [{ ...ok, match: { colour: 'red' } }, 'match.colour: unknown key'],
    [{ ...ok, match: { types: ['no_such_type'] } }, 'match.types[0]: expected an event type or family'],
    [{ ...ok, match: { domains: ['not a domain'] } }, 'match.domains[0]: expected a domain name'],
    [{ ...ok, match: { sources: ['mars'] } }, 'match.sources[0]: expected tenant, group:<id>'],
    [{ ...ok, match: 'paste' }, 'match: expected an object, got a string'],
    [{ until: 'PT4H', reason: 'x' }, 'match: expected an object, got missing'],
    [{ ...ok, until: 'PT0S' }, 'until: must be in the future'],
    [{ ...ok, until: 4 }, 'until: expected a string, got a number'],
    [{ ...ok, reason: '' }, 'reason: expected at least 1 character'],
    [{ ...ok, reason: '   ' }, 'reason: expected a reason, not blanks'],
    [{ ...ok, reason: 'x'.repeat(501) }, 'reason: expected at most 500 characters'],
    [{ ...ok, by: 'me' }, 'by: unknown key'],
  ])('%j → %s', (input, message) => {
    const out = checkSilenceRequest(input, NOW);
    expect(out.ok).toBe(false);
    const lines = out.ok ? [] : out.issues.map((i) => `${i.path}: ${i.message}`);
    expect(lines.join('\n')).toContain(message);
  });

  it('every problem at once, each named', () => {
    const out = checkSilenceRequest({ match: { kind: 'alert' }, until: 'soon', reason: '' }, NOW);
    const paths = out.ok ? [] : out.issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['match.kind', 'reason']));
  });
});

describe('which silence holds an alert back', () => {
  const alert = eventAlert(makeEvent({ metadata: { severity: 'high', type: 'paste' } }));
  const paste = {
    id: 's-0000000001-aaaaaa',
    match: { types: ['paste'] },
    until: '2026-11-23T04:00:00Z',
    reason: 'noise',
  };
  const high = {
    id: 's-0000000002-bbbbbb',
    match: { severity: { gte: 'high' as const } },
    until: '2026-11-23T02:00:00Z',
    reason: 'storm',
  };

  it('the first active one that matches', () => {
    expect(silenceFor([paste, high], alert, NOW)?.id).toBe(paste.id);
    expect(silenceFor([{ ...paste, match: { types: ['forum_post'] } }, high], alert, NOW)?.id).toBe(high.id);
  });

  it('not one that ended, by hand or by its until', () => {
    expect(silenceFor([{ ...paste, expiredAt: '2026-11-22T23:00:00Z' }], alert, NOW)).toBeUndefined();
    expect(silenceFor([high], alert, NOW + 2 * HOUR)).toBeUndefined();
  });

  it('routing with silences on top names the silence; a config silence keeps its own decision', () => {
    const route = (): Decision => ({ destinations: new Map([['soc', ['all']]]) });
    const decided = withSilences(route, [paste])(alert, new Date(NOW));
    expect(decided.silenced).toEqual({ reason: 'noise', until: paste.until, id: paste.id });
    expect(decided.destinations.get('soc')).toEqual(['all']);
    expect(silencedNote(decided.silenced as { id: string; reason: string })).toBe(
      `silenced by ${paste.id}: noise`,
    );
    const configured = (): Decision => ({
      destinations: new Map(),
      silenced: { reason: 'from the config', until: paste.until },
    });
    expect(withSilences(configured, [paste])(alert, new Date(NOW)).silenced?.reason).toBe('from the config');
    expect(withSilences(route, [paste])(alert, new Date(NOW + 5 * HOUR)).silenced).toBeUndefined();
  });
});
