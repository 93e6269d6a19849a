/**
 * The Entra stand-in's access tokens: JWTs shaped like the app-only tokens Microsoft's token
 * endpoint issues for Graph (header.payload.signature, base64url; `roles` the application
 * permissions granted, `tid`, `appid`, `exp` in epoch seconds), signed with an HMAC key of the
 * stand-in's own so that Graph can tell a token it issued from one made up. A client reads the
 * payload (`identity test` compares `roles`); only the stand-in checks the signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const GRAPH_AUDIENCE = 'https://graph.microsoft.com';

export interface AppTokenClaims {
  aud: string;
  iss: string;
  iat: number;
  nbf: number;
  exp: number;
  appid: string;
  /** The app's service principal (stand-in: derived from the client id). */
  oid: string;
  sub: string;
  tid: string;
  roles: string[];
  idtyp: 'app';
  ver: '1.0';
  uti: string;
}

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function signature(key: Buffer, signed: string): string {
  return createHmac('sha256', key).update(signed).digest('base64url');
}

/** A signed token for `claims`. */
export function signToken(key: Buffer, claims: AppTokenClaims): string {
  const signed = `${encode({ typ: 'JWT', alg: 'HS256', kid: 'stand-in' })}.${encode(claims)}`;
  return `${signed}.${signature(key, signed)}`;
}

/** The claims of a token this key signed; undefined for anything else (malformed, altered, foreign). */
export function readToken(key: Buffer, token: string): AppTokenClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [header, payload, sig] = parts as [string, string, string];
  const want = Buffer.from(signature(key, `${header}.${payload}`));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as AppTokenClaims;
  } catch {
    return undefined;
  }
}
