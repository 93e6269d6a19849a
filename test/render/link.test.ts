/** Links into the upstream web app: flare_url first, else the uid with its id part as one component. */
import { describe, expect, it } from 'vitest';
import { credentialLink, eventLink, safeUrl, uidLink } from '../../lib/render/link.ts';
import { makeCredential, makeEvent } from './fixtures.ts';

const APP = 'https://app.flare.io';

describe('uidLink', () => {
  it('encodes each / of the id part as %2F', () => {
    expect(uidLink('forum_post/darkforum/thread/1234/post/5', APP)).toBe(
      'https://app.flare.io/#/forum_post/darkforum/thread%2F1234%2Fpost%2F5',
    );
  });

  it('encodes the id part as one URI component (spaces, ?, #, %)', () => {
    expect(uidLink('leak/s3/a b?c#d%e', APP)).toBe('https://app.flare.io/#/leak/s3/a%20b%3Fc%23d%25e');
  });

  it('keeps a simple id as is and ignores a trailing slash on the app URL', () => {
    expect(uidLink('paste/pastebin/abc123', `${APP}/`)).toBe('https://app.flare.io/#/paste/pastebin/abc123');
  });

  it('has no link for a uid without three parts', () => {
    expect(uidLink('paste/pastebin', APP)).toBeUndefined();
    expect(uidLink('paste//x', APP)).toBeUndefined();
    expect(uidLink('paste/x/', APP)).toBeUndefined();
  });
});

describe('eventLink', () => {
  it('prefers metadata.flare_url', () => {
    const item = makeEvent({
      metadata: { uid: 'leak/x/1/2', flare_url: 'https://app.flare.io/#/leak/x/1%2F2' },
    });
    expect(eventLink(item, 'https://other.example')).toBe('https://app.flare.io/#/leak/x/1%2F2');
  });

  it('falls back to the uid link without flare_url, or when flare_url is not http(s)', () => {
    const plain = makeEvent({ metadata: { uid: 'leak/x/1/2' } });
    expect(eventLink(plain, APP)).toBe('https://app.flare.io/#/leak/x/1%2F2');
    const hostile = makeEvent({ metadata: { uid: 'leak/x/1/2', flare_url: 'javascript:alert(1)' } });
    expect(eventLink(hostile, APP)).toBe('https://app.flare.io/#/leak/x/1%2F2');
  });
});

describe('credentialLink', () => {
  it('links only when the credential carries an event_uid', () => {
    expect(credentialLink(makeCredential({ event_uid: 'leak/combo/list/7' }), APP)).toBe(
      'https://app.flare.io/#/leak/combo/list%2F7',
    );
    expect(credentialLink(makeCredential({ event_uid: null }), APP)).toBeUndefined();
    expect(credentialLink(makeCredential(), APP)).toBeUndefined();
  });
});

describe('safeUrl', () => {
  it('cannot break out of a Slack <url|label> link', () => {
    const url = safeUrl('https://x.example/a|b<c>d e');
    expect(url).toBe('https://x.example/a%7Cb%3Cc%3Ed%20e');
  });
});
