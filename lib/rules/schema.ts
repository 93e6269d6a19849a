/**
 * The alert config (docs/configuration.md) as one strict zod schema: an unknown key anywhere is
 * an error naming its path, and `config schema` prints the JSON Schema generated from this same
 * schema. Cross-references (route targets, sources, duplicate names) are checked in the same pass
 * (config-checks.ts, run by config-parse.ts).
 *
 * Its shape is schema-base.ts's, with the `identity` key's (identity/schema.ts) at the top level
 * and in a tenant: a worker's start checks a config without `identity` with schema-base.ts's
 * schema that takes any value there, and loads this only for a config with `identity`.
 */
import * as z from 'zod/mini';
import { identitySchema } from '../identity/schema.ts';
import { configSchemaWith } from './schema-base.ts';

export * from './schema-base.ts';

export const configSchema = configSchemaWith(identitySchema);
export type AlertsConfig = z.infer<typeof configSchema>;
export type TenantConfig = NonNullable<AlertsConfig['tenants']>[number];
export type PasswordPolicy = AlertsConfig['passwords'];

/** The JSON Schema of the config, generated from the zod schema above. */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
