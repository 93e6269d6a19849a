/** The password policy: masked, hidden, clear; raw items; identities. */
import { describe, expect, it } from 'vitest';
import {
  applyPasswordPolicy,
  applyPasswordPolicyToIdentity,
  maskRawItem,
  maskSecret,
  passwordZone,
} from '../../lib/rules/passwords.ts';
import { makeCredential } from '../render/fixtures.ts';

describe('maskSecret', () => {
  it('keeps the first and last character and the length', () => {
    expect(maskSecret('Summer2024!')).toBe('S*********!');
    expect(maskSecret('abc')).toBe('a*c');
  });

  it('masks 1 and 2 character values entirely, and leaves empty as empty', () => {
    expect(maskSecret('x')).toBe('*');
    expect(maskSecret('xy')).toBe('**');
    expect(maskSecret('')).toBe('');
  });

  it('counts code points, so an emoji is not split', () => {
    expect(maskSecret('😀secret😀')).toBe('😀******😀');
  });

  it('is idempotent', () => {
    expect(maskSecret(maskSecret('Summer2024!'))).toBe('S*********!');
  });
});

describe('applyPasswordPolicy', () => {
  for (const hash_type of ['plaintext', 'unknown', null, 'sha1', 'bcrypt']) {
    it(`masks the hash whatever its hash_type (${hash_type})`, () => {
      const credential = makeCredential({ hash: 'Winter1999#', hash_type });
      const masked = applyPasswordPolicy(credential, 'masked');
      expect(masked.hash).toBe('W*********#');
      expect(credential.hash, 'the input is not changed').toBe('Winter1999#');
      expect(masked.identity_name).toBe(credential.identity_name);
    });
  }

  it('hidden removes the field', () => {
    const hidden = applyPasswordPolicy(makeCredential({ hash: 'Winter1999#' }), 'hidden');
    expect('hash' in hidden).toBe(false);
    expect(JSON.stringify(hidden)).not.toContain('Winter1999#');
  });

  it('clear leaves the credential as it is', () => {
    const credential = makeCredential({ hash: 'Winter1999#' });
    expect(applyPasswordPolicy(credential, 'clear')).toEqual(credential);
  });

  it('masks an off-schema numeric hash as text', () => {
    expect(applyPasswordPolicy({ hash: 123456 as unknown }, 'masked').hash).toBe('1****6');
  });
});

describe('applyPasswordPolicyToIdentity', () => {
  it('masks every record of an identity', () => {
    const identity = {
      name: 'jane@example.com',
      passwords: [
        { id: 1, hash: 'hunter22', imported_at: '2026-01-01T00:00:00Z' },
        { id: 2, hash: 'correcthorse', imported_at: '2026-01-01T00:00:00Z' },
      ],
    };
    const masked = applyPasswordPolicyToIdentity(identity, 'masked');
    expect(masked.passwords.map((p) => p.hash)).toEqual(['h******2', 'c**********e']);
  });
});

describe('maskRawItem', () => {
  const raw = {
    id: 'not-a-number',
    hash: 'Autumn2020?',
    nested: { Password: 'letmein99', list: [{ hash: 'qwerty123' }, { passwd: 424242 }] },
    passwords: [{ hash: 'dragon2000', source: { hash_type: 'plaintext', credential_hash: 'abc123def' } }],
  };

  it('masks every hash and password field at any depth, returning a copy', () => {
    const masked = maskRawItem(raw, 'masked') as typeof raw;
    const text = JSON.stringify(masked);
    for (const secret of ['Autumn2020?', 'letmein99', 'qwerty123', '424242', 'dragon2000']) {
      expect(text, `${secret} is masked`).not.toContain(secret);
    }
    expect(masked.hash).toBe('A*********?');
    expect(masked.passwords[0]!.hash).toBe('d********0');
    expect(masked.passwords[0]!.source.credential_hash, 'a digest of the credential is not a password').toBe(
      'abc123def',
    );
    expect(raw.hash, 'the input is not changed').toBe('Autumn2020?');
  });

  it('hidden removes those fields', () => {
    const hidden = maskRawItem(raw, 'hidden') as Record<string, unknown>;
    expect('hash' in hidden).toBe(false);
    expect(JSON.stringify(hidden)).not.toMatch(/"(hash|Password|passwd)"/);
  });

  it('clear returns the item as is', () => {
    expect(maskRawItem(raw, 'clear')).toBe(raw);
  });

  it('survives non-objects and cycles', () => {
    expect(maskRawItem('hash', 'masked')).toBe('hash');
    const cyclic: Record<string, unknown> = { hash: 'abcdef' };
    cyclic.self = cyclic;
    expect(maskRawItem(cyclic, 'masked')).toEqual({ hash: 'a****f', self: '[circular]' });
  });
});

describe('maskRawItem: passwords in any shape under a password field', () => {
  const secrets = ['pw1-Cleartext', 'pw2-Cleartext', 'pw3-Cleartext', 'pw4-Cleartext', '98765432'];
  const shapes: [string, Record<string, unknown>][] = [
    ['an array of strings and objects', { hash: ['pw1-Cleartext', { x: 'pw2-Cleartext' }] }],
    ['objects nested in objects', { hash: { a: { b: 'pw3-Cleartext' } } }],
    ['an array under a list of records', { passwords: [{ hash: ['pw4-Cleartext'] }] }],
    ['numbers deep inside', { Password: [[98765432]], id: 7 }],
    ['a bare list of passwords', { passwords: ['pw1-Cleartext', ['pw2-Cleartext']] }],
    [
      'a list holding a record that holds another',
      { identity: { passwords: [{ pwd: { v: 'pw3-Cleartext' } }] } },
    ],
  ];

  for (const [what, raw] of shapes) {
    it(`masked: no cleartext survives (${what})`, () => {
      const text = JSON.stringify(maskRawItem(raw, 'masked'));
      for (const secret of secrets) expect(text, `${secret} in ${text}`).not.toContain(secret);
      // Something is still there, masked to its length, so an analyst sees the shape.
      expect(text).toMatch(/\*{3,}/);
    });

    it(`hidden: no cleartext survives and no mask either (${what})`, () => {
      const text = JSON.stringify(maskRawItem(raw, 'hidden'));
      for (const secret of secrets) expect(text, `${secret} in ${text}`).not.toContain(secret);
      expect(text).not.toMatch(/\*{3,}/);
    });

    it(`clear: the input itself (${what})`, () => {
      expect(maskRawItem(raw, 'clear')).toBe(raw);
    });
  }

  it('masks each value in place, keeping keys and non-secret fields', () => {
    expect(maskRawItem({ hash: ['pw1-Cleartext', { x: 'pw2-Cleartext' }], id: 'keep-me' }, 'masked')).toEqual(
      {
        hash: ['p***********t', { x: 'p***********t' }],
        id: 'keep-me',
      },
    );
    expect(maskRawItem({ hash: { a: { b: 'pw', ok: true, n: null } } }, 'masked')).toEqual({
      hash: { a: { b: '**', ok: true, n: null } },
    });
    expect(
      maskRawItem({ passwords: [{ hash: ['pw4-Cleartext'], imported_at: '2026-01-01' }] }, 'masked'),
    ).toEqual({ passwords: [{ hash: ['p***********t'], imported_at: '2026-01-01' }] });
  });

  it('hidden removes the whole field, and a bare password from a list', () => {
    expect(maskRawItem({ hash: ['pw1', { x: 'pw2' }], id: 1 }, 'hidden')).toEqual({ id: 1 });
    expect(maskRawItem({ passwords: [{ hash: ['pw'], id: 2 }, 'pw5'] }, 'hidden')).toEqual({
      passwords: [{ id: 2 }],
    });
  });

  it('does not change the input', () => {
    const raw = { hash: ['pw1-Cleartext', { x: 'pw2-Cleartext' }] };
    maskRawItem(raw, 'masked');
    maskRawItem(raw, 'hidden');
    expect(raw).toEqual({ hash: ['pw1-Cleartext', { x: 'pw2-Cleartext' }] });
  });
});

describe('applyPasswordPolicy: password fields the spec does not name', () => {
  const credential = {
    ...makeCredential({ hash: 'Winter1999#' }),
    password: 'Spring2001$',
    Plaintext_Password: 'Summer2002%',
    pass: 'Autumn2003&',
    extra: { passwd: 'Frost2004*', note: 'kept' },
    source: { id: 's1', name: 'Combo', cleartext: 'Thaw2005+', credential_hash: 'abc123def' },
    known_password_id: 'kp-42',
    passwordChangedAt: '2026-01-01T00:00:00Z',
  };
  const secrets = ['Winter1999#', 'Spring2001$', 'Summer2002%', 'Autumn2003&', 'Frost2004*', 'Thaw2005+'];

  it('masked: every one is masked, at any depth; fields about a password are kept', () => {
    const masked = applyPasswordPolicy(credential, 'masked');
    const text = JSON.stringify(masked);
    for (const secret of secrets) expect(text, secret).not.toContain(secret);
    expect(masked.password).toBe('S*********$');
    expect(masked.extra).toEqual({ passwd: 'F*********', note: 'kept' });
    expect(masked.source.credential_hash).toBe('abc123def');
    expect(masked.known_password_id).toBe('kp-42');
    expect(masked.passwordChangedAt).toBe('2026-01-01T00:00:00Z');
    expect(masked.hash_type).toBe(credential.hash_type);
    expect(applyPasswordPolicy(masked, 'masked'), 'idempotent').toEqual(masked);
  });

  it('hidden: every one is removed', () => {
    const hidden = applyPasswordPolicy(credential, 'hidden') as Record<string, unknown>;
    const text = JSON.stringify(hidden);
    for (const secret of secrets) expect(text, secret).not.toContain(secret);
    for (const field of ['hash', 'password', 'Plaintext_Password', 'pass'])
      expect(field in hidden).toBe(false);
    expect(hidden.identity_name).toBe(credential.identity_name);
  });

  it('clear: the credential as it is', () => {
    expect(applyPasswordPolicy(credential, 'clear')).toBe(credential);
  });
});

describe('passwordZone: which names hold a password', () => {
  const cases: [string, string][] = [
    ['hash', 'all'],
    ['password', 'all'],
    ['Password', 'all'],
    ['plainPassword', 'all'],
    ['password_plaintext', 'all'],
    ['clear_text', 'all'],
    ['pwd', 'all'],
    ['user_pass', 'all'],
    ['passwords', 'list'],
    ['old_hashes', 'list'],
    ['hash_type', 'none'],
    ['credential_hash', 'none'],
    ['known_password_id', 'none'],
    ['passwordChangedAt', 'none'],
    ['passport', 'none'],
    ['bypass', 'none'],
    ['identity_name', 'none'],
  ];
  for (const [name, zone] of cases) it(`${name}: ${zone}`, () => expect(passwordZone(name)).toBe(zone));
});
