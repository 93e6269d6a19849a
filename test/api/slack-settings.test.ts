/**
 * The Slack settings the API reads from SLACK_ACTIONS (lib/api/deps.ts `slackSettings`): the
 * identity admins reach the click handler (without them every disable from Slack is refused), and
 * a "*" among them is never honoured.
 */
import { describe, expect, it } from 'vitest';
import { slackSettings } from '../../lib/api/deps.ts';

const secrets = { slackSigning: 'shh' };
const base = { signingSecret: { secret: 'slackSigning' }, teamId: 'T0123', allowedUsers: ['U1', 'U2'] };

describe('slackSettings', () => {
  it('keeps identityAdmins, named one by one', () => {
    const got = slackSettings(JSON.stringify({ ...base, identityAdmins: ['U1', '*', 7] }), secrets);
    expect(got?.identityAdmins).toEqual(['U1']);
    expect(got?.allowedUsers).toEqual(['U1', 'U2']);
  });

  it('has no identity admins when none are named', () => {
    expect(slackSettings(base, secrets)?.identityAdmins).toBeUndefined();
  });
});
