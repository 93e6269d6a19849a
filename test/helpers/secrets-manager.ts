/**
 * Secrets Manager's stand-in: GetSecretValue over its real JSON protocol on a port of its own, for
 * the SDK the product uses (pointed here by AWS_ENDPOINT_URL_SECRETS_MANAGER, which `env` gives
 * with a region and fake keys). It serves the secrets it is given, by id; any other id answers
 * ResourceNotFoundException, as AWS does. Each request's id is kept, so a test can prove which
 * secret a function read, and which it never asked for.
 *
 * @example
 * const sm = await secretsManager({ main: { apiToken: 't' }, identity: { oktaToken: 'o' } });
 * await withEnvironment({ ...sm.env, SECRET_ID: 'main', IDENTITY_SECRET_ID: 'identity' }, run);
 * expect(sm.read).toEqual(['main', 'identity']);
 */
import { type StandIn, standIn } from './stand-in.ts';

export interface SecretsManagerStandIn {
  stand: StandIn;
  /** The variables that point the SDK here. */
  env: Record<string, string>;
  /** The ids asked for with GetSecretValue, in order. */
  readonly read: string[];
}

export async function secretsManager(secrets: Record<string, unknown>): Promise<SecretsManagerStandIn> {
  const read: string[] = [];
  const stand = await standIn((req, body, res) => {
    const answer = (status: number, json: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(json));
    };
    if (req.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue')
      return answer(400, { __type: 'UnknownOperationException', message: 'only GetSecretValue here' });
    const id = String((JSON.parse(body) as { SecretId?: unknown }).SecretId);
    read.push(id);
    if (!(id in secrets))
      return answer(400, {
        __type: 'ResourceNotFoundException',
        message: "Secrets Manager can't find the specified secret.",
      });
    answer(200, {
      ARN: `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${id}-AbCdEf`,
      Name: id,
      VersionId: '00000000-0000-0000-0000-000000000001',
      SecretString: JSON.stringify(secrets[id]),
      VersionStages: ['AWSCURRENT'],
      CreatedDate: 1_700_000_000,
    });
  });
  return {
    stand,
    env: {
      AWS_ENDPOINT_URL_SECRETS_MANAGER: stand.url,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDSTANDIN',
      AWS_SECRET_ACCESS_KEY: 'stand-in-secret-key',
    },
    read,
  };
}
