/**
 * Node's `require`, for the AWS SDK's CommonJS builds (sdk.ts says why). A module of its own so that
 * code needing one client (secrets.ts: Secrets Manager) loads it without importing sdk.ts, which
 * loads the DynamoDB SDK as it is imported: a CLI command that reads a secret and never the table
 * (`token test`, `identity test`, `destinations test`) starts without it.
 */
import { createRequire } from 'node:module';

export const requireSdk = createRequire(import.meta.url);
