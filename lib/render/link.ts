/**
 * Links to an item in the upstream's web app (docs/destinations/): the event's
 * `metadata.flare_url` when it is a usable http(s) URL, else `<appUrl>/#/<type>/<origin>/<id>`
 * where `<id>` is the rest of the uid encoded as one URI component (each `/` becomes `%2F`).
 *
 * @example
 * uidLink('leak/forum/thread/1/post/2', 'https://app.flare.io')
 * // 'https://app.flare.io/#/leak/forum/thread%2F1%2Fpost%2F2'
 */
import type { Alert } from '../model.ts';
import type { Credential, EventItem } from '../upstream/schemas.ts';

/** A URL fit to put in a link: http(s) only, normalised, and free of `|`, `<`, `>` and spaces. */
export function safeUrl(candidate: string): string | undefined {
  let url: URL;
  try {
    url = new URL(candidate.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  // `href` already percent-encodes `<`, `>`, `"` and spaces; `|` would end a Slack link's URL.
  return url.href.replaceAll('|', '%7C');
}

/** The web-app link for a uid `type/origin/id`, or undefined when the uid does not have three parts. */
export function uidLink(uid: string, appUrl: string): string | undefined {
  const first = uid.indexOf('/');
  const second = first < 0 ? -1 : uid.indexOf('/', first + 1);
  if (first <= 0 || second <= first + 1 || second === uid.length - 1) return undefined;
  const type = uid.slice(0, first);
  const origin = uid.slice(first + 1, second);
  const id = uid.slice(second + 1);
  const base = appUrl.replace(/\/+$/, '');
  return safeUrl(
    `${base}/#/${encodeURIComponent(type)}/${encodeURIComponent(origin)}/${encodeURIComponent(id)}`,
  );
}

export function eventLink(item: EventItem, appUrl: string): string | undefined {
  const given = item.metadata.flare_url;
  const fromUpstream = given ? safeUrl(given) : undefined;
  return fromUpstream ?? uidLink(item.metadata.uid, appUrl);
}

/** Credentials have a page only when they came from an event (`event_uid`). */
export function credentialLink(item: Credential, appUrl: string): string | undefined {
  return item.event_uid ? uidLink(item.event_uid, appUrl) : undefined;
}

export function alertLink(alert: Alert, appUrl: string): string | undefined {
  return alert.kind === 'event' ? eventLink(alert.item, appUrl) : credentialLink(alert.item, appUrl);
}
