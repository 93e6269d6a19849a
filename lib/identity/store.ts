/**
 * What identity keeps in the table (docs/identity.md), three kinds of item:
 * - `idl#<scope>#<provider>#<login>` / `idl`: a provider's answer for a login (the account, or that
 *   there is none) for an hour, `unavailable` for 5 minutes: however many leaks name the login, it
 *   is looked up once an hour. `<scope>` is the tenant's id, `top` for the top-level sources.
 * - `idv#<item key>` / `idv`: an item's verdict, decided when it is first routed and kept as long
 *   as its delivery records: a re-walk after a crash, or another stream finding the same item,
 *   routes it with this verdict, never a newer one.
 * - `idlog#<scope>#<login>` / `<item key>`: which items name a login, with the provider that
 *   decided each: an action on the account is allowed only on a login with one
 *   (docs/identity.md), and follows up where each was alerted. Written with the verdict.
 * - `idp` / `<scope>#<provider>`: a provider's state for `status`: its last lookup, and whether it
 *   refuses our credentials (noted once for the deployment, so the report goes out once).
 * Each part of a key that comes from the config or the wild is percent-encoded (`#` never splits).
 */
import { RECORD_RETENTION_DAYS } from '../model.ts';
import { batchGet, batchPut, mapLimit, queryAll, type StoredItem, type TableIo } from '../state/io.ts';
import { marshall, unmarshall } from '../state/marshall.ts';
import { PutItemCommand, UpdateItemCommand } from '../state/sdk.ts';
import type { Answer } from './verdict.ts';
import type { IdentityVerdict } from './words.ts';

/** How long a provider's answer is trusted; a failed lookup is tried again sooner. */
export const ANSWER_TTL_MS = 3_600_000;
export const UNAVAILABLE_TTL_MS = 300_000;

/** Whose config names the provider: a `tenants` entry's id, or `top`. */
export type Scope = number | 'top';
export const scopeOf = (tenant: number | undefined): Scope => tenant ?? 'top';

const enc = (part: string | number) => encodeURIComponent(String(part));
export const loginKey = (scope: Scope, provider: string, login: string) => ({
  pk: `idl#${enc(scope)}#${enc(provider)}#${enc(login.toLowerCase())}`,
  sk: 'idl',
});
export const verdictKey = (itemKey: string) => ({ pk: `idv#${enc(itemKey)}`, sk: 'idv' });
export const loginItemsKey = (scope: Scope, login: string) =>
  `idlog#${enc(scope)}#${enc(login.toLowerCase())}`;

/** An item that names a login, and its verdict (from `idlog`). */
export interface LoginItem {
  itemKey: string;
  provider: string;
  verdict: IdentityVerdict;
}

/** What keepVerdicts is given for an item. */
export interface ItemVerdict {
  key: string;
  verdict: IdentityVerdict;
  scope: Scope;
  login: string;
}
export const providerKey = (scope: Scope, provider: string) => ({
  pk: 'idp',
  sk: `${enc(scope)}#${enc(provider)}`,
});

export interface LoginRef {
  scope: Scope;
  provider: string;
  login: string;
}

export interface ProviderState {
  scope: Scope;
  provider: string;
  lastLookupAt?: string;
  refusedAt?: string;
  refusedMessage?: string;
}

const ttl = (ms: number) => Math.floor(ms / 1000);

export class IdentityStore {
  constructor(private readonly io: TableIo) {}

  /** The answers still fresh for `logins`, by `loginKey(...).pk`. */
  async answers(logins: readonly LoginRef[]): Promise<Map<string, Answer>> {
    const now = this.io.clock.now();
    const found = await batchGet(
      this.io,
      logins.map((l) => marshall(loginKey(l.scope, l.provider, l.login))),
    );
    const out = new Map<string, Answer>();
    for (const raw of found) {
      const item = unmarshall(raw) as { pk: string; answer?: string; freshUntil?: number };
      // The TTL deletes late (hours): an answer past its hour is stale whether or not it is gone.
      if (typeof item.answer !== 'string' || !(Number(item.freshUntil) > now)) continue;
      out.set(item.pk, JSON.parse(item.answer) as Answer);
    }
    return out;
  }

  /** Keeps answers for their time (an hour; `unavailable` 5 minutes). */
  async keepAnswers(entries: readonly { ref: LoginRef; answer: Answer }[]): Promise<void> {
    const now = this.io.clock.now();
    await batchPut(
      this.io,
      entries.map(({ ref, answer }) => {
        const freshUntil = now + ('unavailable' in answer ? UNAVAILABLE_TTL_MS : ANSWER_TTL_MS);
        return marshall({
          ...loginKey(ref.scope, ref.provider, ref.login),
          answer: JSON.stringify(answer),
          checkedAt: new Date(now).toISOString(),
          freshUntil,
          expiresAt: ttl(freshUntil + 86_400_000),
        });
      }),
    );
  }

  /** The verdicts already decided for these item keys. */
  async verdicts(itemKeys: readonly string[]): Promise<Map<string, IdentityVerdict>> {
    const found = await batchGet(
      this.io,
      itemKeys.map((k) => marshall(verdictKey(k))),
    );
    const out = new Map<string, IdentityVerdict>();
    for (const raw of found) {
      const item = unmarshall(raw) as { key: string; verdict: string };
      out.set(item.key, JSON.parse(item.verdict) as IdentityVerdict);
    }
    return out;
  }

  /**
   * Keeps each item's verdict and returns the verdicts that stand. `exclusive`: nobody else can
   * decide these items meanwhile (the stream's lease), so they are batch-written. Otherwise each is
   * a conditional put, and where another run decided first, its verdict is the one returned.
   */
  async keepVerdicts(
    entries: readonly ItemVerdict[],
    exclusive: boolean,
  ): Promise<Map<string, IdentityVerdict>> {
    const now = this.io.clock.now();
    const expiresAt = ttl(now + RECORD_RETENTION_DAYS * 86_400_000);
    const stored = (e: ItemVerdict): StoredItem =>
      marshall({
        ...verdictKey(e.key),
        key: e.key,
        verdict: JSON.stringify(e.verdict),
        login: e.login,
        scope: String(e.scope),
        at: new Date(now).toISOString(),
        expiresAt,
      });
    const out = new Map(entries.map((e) => [e.key, e.verdict]));
    if (exclusive) await batchPut(this.io, entries.map(stored));
    else {
      const lost: string[] = [];
      await mapLimit(entries, 16, async (e) => {
        try {
          this.io.onRequest?.('PutItem');
          await this.io.client.send(
            new PutItemCommand({
              TableName: this.io.tableName,
              Item: stored(e),
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          );
        } catch (error) {
          if ((error as { name?: string })?.name !== 'ConditionalCheckFailedException') throw error;
          lost.push(e.key);
        }
      });
      if (lost.length) for (const [key, verdict] of await this.verdicts(lost)) out.set(key, verdict);
    }
    // The login's index, with the verdicts that stand (written twice by two runs: the same item).
    await batchPut(
      this.io,
      entries.map((e) =>
        marshall({
          pk: loginItemsKey(e.scope, e.login),
          sk: e.key,
          provider: (out.get(e.key) ?? e.verdict).provider,
          verdict: JSON.stringify(out.get(e.key) ?? e.verdict),
          expiresAt,
        }),
      ),
    );
    return out;
  }

  /** The items that name `login` in `scope`, newest verdict last (at most `limit`). */
  async loginItems(scope: Scope, login: string, limit = 500): Promise<LoginItem[]> {
    const items = await queryAll(
      this.io,
      {
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': loginItemsKey(scope, login) }),
      },
      limit,
    );
    return items.map((raw) => {
      const item = unmarshall(raw) as { sk: string; provider: string; verdict: string };
      return {
        itemKey: item.sk,
        provider: item.provider,
        verdict: JSON.parse(item.verdict) as IdentityVerdict,
      };
    });
  }

  /** An item's verdict record with the login and scope it names (a Slack menu's reference). */
  async itemLogin(
    itemKey: string,
  ): Promise<{ scope: Scope; login: string; verdict: IdentityVerdict } | undefined> {
    const [raw] = await batchGet(this.io, [marshall(verdictKey(itemKey))]);
    if (!raw) return undefined;
    const item = unmarshall(raw) as { verdict: string; login?: string; scope?: string };
    if (typeof item.login !== 'string' || typeof item.scope !== 'string') return undefined;
    return {
      scope: item.scope === 'top' ? 'top' : Number(item.scope),
      login: item.login,
      verdict: JSON.parse(item.verdict) as IdentityVerdict,
    };
  }

  /** Notes a cycle's lookups in a provider (for `status`). */
  async looked(scope: Scope, provider: string, at: Date): Promise<void> {
    await this.update(scope, provider, 'SET lastLookupAt = :at', { ':at': at.toISOString() });
  }

  /** Notes that a provider refuses our credentials; true for the run that noted it first (which reports it). */
  async markRefused(scope: Scope, provider: string, at: Date, message: string): Promise<boolean> {
    return this.update(
      scope,
      provider,
      'SET refusedAt = :at, refusedMessage = :m',
      { ':at': at.toISOString(), ':m': message.slice(0, 500) },
      'attribute_not_exists(refusedAt)',
    );
  }

  /** Forgets a refusal; true when there was one. */
  async clearRefused(scope: Scope, provider: string): Promise<boolean> {
    return this.update(
      scope,
      provider,
      'REMOVE refusedAt, refusedMessage',
      undefined,
      'attribute_exists(refusedAt)',
    );
  }

  /** Every provider's state, for `status`. */
  async providers(): Promise<ProviderState[]> {
    const items = await queryAll(this.io, {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: marshall({ ':pk': 'idp' }),
    });
    return items.map((raw) => {
      const item = unmarshall(raw) as Record<string, unknown>;
      const [scope = '', provider = ''] = String(item.sk).split('#').map(decodeURIComponent);
      return {
        scope: scope === 'top' ? 'top' : Number(scope),
        provider,
        ...(typeof item.lastLookupAt === 'string' ? { lastLookupAt: item.lastLookupAt } : {}),
        ...(typeof item.refusedAt === 'string' ? { refusedAt: item.refusedAt } : {}),
        ...(typeof item.refusedMessage === 'string' ? { refusedMessage: item.refusedMessage } : {}),
      };
    });
  }

  private async update(
    scope: Scope,
    provider: string,
    expression: string,
    values: Record<string, unknown> | undefined,
    condition?: string,
  ): Promise<boolean> {
    try {
      this.io.onRequest?.('UpdateItem');
      await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall(providerKey(scope, provider)),
          UpdateExpression: expression,
          ...(values ? { ExpressionAttributeValues: marshall(values) } : {}),
          ...(condition ? { ConditionExpression: condition } : {}),
        }),
      );
      return true;
    } catch (error) {
      if (condition && (error as { name?: string })?.name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }
}
