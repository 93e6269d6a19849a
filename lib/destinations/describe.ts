/**
 * How a destination is described without a secret (`preview`): a URL without its query (a token
 * often hides there), secrets by their name in the secret object.
 */
import type { SecretRef } from '../rules/schema-parts.ts';

/** How the docs say a value may be a secret. */
export const SECRET_OR = 'a string, or `{ "secret": "NAME" }` to take it from the secret object';

export function secretText(value: string | SecretRef): string {
  return typeof value === 'string' ? value : `<secret ${value.secret}>`;
}

/**
 * A URL without its query, and with `path` added as the sender adds it (its base without trailing
 * slashes, so `https://x.example` and `https://x.example/` both give
 * `https://x.example/rest/api/3/issue`); secrets by name only.
 */
export function urlText(value: string | SecretRef, path = ''): string {
  if (typeof value !== 'string') return `${secretText(value)}${path}`;
  try {
    const url = new URL(value);
    const base = path ? url.pathname.replace(/\/+$/, '') : url.pathname;
    return `${url.origin}${base}${path}${url.search ? '?…' : ''}`;
  } catch {
    return '<invalid URL>';
  }
}

/** A base URL as senders join paths to it: without trailing slashes. */
export function baseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}
