/** `token test`: endpoint 1, to check the upstream credentials before anything else. */
import { readEnvironment } from '../../env.ts';
import type { Command } from '../command.ts';
import { terminalSafe } from '../terminal.ts';

export const tokenTestCommand: Command = {
  path: ['token', 'test'],
  example: 'exposure-alerts token test',
  optionHelp: { json: 'print the answer as JSON' },
  uses: { upstream: true },
  usage: 'token test [--json]',
  summary: 'check the API token (or key): print the tenant, user and scopes it is for',
  options: { json: { type: 'boolean' } },
  async run({ values, io, logger }) {
    const [{ loadSecrets }, { createUpstreamClient }] = await Promise.all([
      import('../../secrets.ts'),
      import('../../upstream/index.ts'),
    ]);
    const env = readEnvironment(io.env);
    const secrets = await loadSecrets(env);
    const client = createUpstreamClient(env, secrets, { logger, maxAttempts: 3 });
    const info = await client.tokenTest({ deadline: Date.now() + 60_000 });
    if (values.json) {
      io.stdout(`${terminalSafe(JSON.stringify(info, null, 2), { multiline: true })}\n`);
    } else {
      io.stdout(
        [
          `tenant:       ${info.tenant_id}`,
          // The ids are numbers (the schema says so); the e-mail and scopes are upstream strings.
          `user:         ${info.user_id} (${terminalSafe(info.user_email)})`,
          `organization: ${info.organization_id}`,
          `api key:      ${info.api_key_id}`,
          `scopes:       ${terminalSafe(info.scopes.join(', ')) || '(none)'}`,
          '',
        ].join('\n'),
      );
    }
    return 0;
  },
};
