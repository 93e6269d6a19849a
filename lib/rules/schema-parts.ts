/** Pieces every part of the config schema uses (schema.ts, schema-destinations.ts). */
import * as z from 'zod/mini';
import { nonEmpty } from './match-schema.ts';

/** `{ "secret": "NAME" }`: a value looked up in the secret object. */
export const secretRefSchema = z.strictObject({ secret: nonEmpty });
export type SecretRef = z.infer<typeof secretRefSchema>;
export const secretOr = (schema: z.ZodMiniType<string>) => z.union([schema, secretRefSchema]);

export const httpUrl = z
  .string()
  .check(z.refine((s) => /^https?:\/\/[^\s/]+/i.test(s) && URL.canParse(s), 'expected an http(s) URL'));
