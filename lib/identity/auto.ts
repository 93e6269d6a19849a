/**
 * The automatic response (docs/identity.md, `identity.auto`): the actions listed under
 * `atRisk` (only `revokeSessions` and `confirmCompromised`) taken by themselves for the first
 * `at_risk` verdict of each (tenant, provider, account). Decided with the verdict, before the item
 * is routed, and kept with it as `_identity.auto`, so the alert says what is done (or that the
 * hour's limit paused it) and a re-walk says the same.
 *
 * Never for an item that would be baselined, silenced or routed nowhere (the caller says which
 * would be sent), never for a login matching `exclude`. A dry run's (`dryRun`) is decided as the real
 * run's would be, on the dry run's own table (which reads the real run's markers and counts:
 * state/read-through.ts), and noted as not taken; its actions are never recorded. In the table:
 * - `idauto#<scope>#<provider>#<account id>` / `idauto`: the account's first automatic response, put
 *   once (a conditional put): a later leak of the same account, or another run, takes none. A
 *   response that failed (act.ts: an hour of refusals for rate, or any failure) marks it `failed`:
 *   the next leak of the account responds again, as round n + 1, with action ids of that round.
 * - `idautohour#<scope>#<hour>` / `idautohour`: the responses begun in that hour, counted with a
 *   conditional increment that stops at `maxPerHour`, across every run.
 * The order: the hour's count first (a paused account stays free for a later leak), then the
 * actions' records (ids from the account, so recording twice is harmless), then the account's
 * first. Of two runs at once for one account, one wins the account; the other's count
 * stays spent, so the limit errs on doing less.
 * The actions themselves are recorded (lib/identity/act.ts, by `auto`, with an id from the account)
 * and taken after the cycle's delivery pass, so their follow-ups find the alert sent.
 */
import { RECORD_RETENTION_DAYS } from '../model.ts';
import { batchGet, type TableIo } from '../state/io.ts';
import { marshall, unmarshall } from '../state/marshall.ts';
import { PutItemCommand, UpdateItemCommand } from '../state/sdk.ts';
import type { IdentityConfig } from './schema.ts';
import type { Scope } from './store.ts';
import type { AccountAction, AutoNote, IdentityVerdict } from './words.ts';

/** Automatic actions the config may list (`config validate` refuses others). */
export const AUTO_ACTIONS: readonly AccountAction[] = ['revokeSessions', 'confirmCompromised'];

const enc = (part: string | number) => encodeURIComponent(String(part));
const HOUR = 3_600_000;

/** A shell-like pattern (`admin-*@acme.com`) as a whole-string, case-blind test. */
export function excluded(patterns: readonly string[] | undefined, login: string): boolean {
  return (patterns ?? []).some((pattern) => {
    const source = pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    return new RegExp(`^${source}$`, 'i').test(login);
  });
}

/** The action id of an account's automatic response: the same for every run that decides it. */
export const autoActionId = (scope: Scope, provider: string, account: string, round = 0) => {
  const id = `auto-${enc(scope)}-${enc(provider)}-${enc(account)}`;
  return round ? `${id.slice(0, 190)}-r${round}` : id.slice(0, 200);
};

const markerKey = (scope: Scope, provider: string, account: string) => ({
  pk: `idauto#${enc(scope)}#${enc(provider)}#${enc(account)}`,
  sk: 'idauto',
});

export class AutoResponse {
  constructor(
    private readonly io: TableIo,
    private readonly options: { dryRun?: boolean } = {},
  ) {}

  /**
   * The note for a first `at_risk` verdict of an account: the actions when the hour has room and
   * no run took one for this account before; `paused` when the hour is full; undefined when this
   * account had its response already (or nothing applies).
   */
  async decide(
    scope: Scope,
    auto: NonNullable<IdentityConfig['auto']>,
    verdict: IdentityVerdict,
    login: string,
    usable: readonly AccountAction[],
    /** Records the actions (their ids are the account's: recording twice is harmless). */
    record: (note: Extract<AutoNote, { actions: AccountAction[] }>) => Promise<void>,
  ): Promise<AutoNote | undefined> {
    const actions = auto.atRisk.filter(
      (a): a is AccountAction =>
        (AUTO_ACTIONS as readonly string[]).includes(a) && usable.includes(a as AccountAction),
    );
    if (verdict.verdict !== 'at_risk' || !verdict.userId || !actions.length) return undefined;
    if (excluded(auto.exclude, login)) return undefined;
    const now = this.io.clock.now();
    const hour = Math.floor(now / HOUR) * HOUR;
    // Already taken for this account: no count spent. After one that failed, the next round.
    const marker = await this.marker(scope, verdict.provider, verdict.userId);
    if (marker && !marker.failed) return undefined;
    const round = marker ? (marker.round ?? 0) + 1 : 0;
    const id = autoActionId(scope, verdict.provider, verdict.userId, round);
    const expiresAt = Math.floor((now + RECORD_RETENTION_DAYS * 86_400_000) / 1000);
    if (!(await this.countHour(scope, hour, auto.maxPerHour)))
      return { paused: true, until: new Date(hour + HOUR).toISOString(), maxPerHour: auto.maxPerHour };
    // Recorded before the account is marked taken: a crash between the two loses no response (a
    // re-walk records the same ids again, harmlessly, and marks it); the other way round, a crash
    // would leave the account marked and its response never recorded.
    const note = { actions, id, ...(this.options.dryRun ? { dryRun: true as const } : {}) };
    if (!this.options.dryRun) await record(note);
    try {
      this.io.onRequest?.('PutItem');
      await this.io.client.send(
        new PutItemCommand({
          TableName: this.io.tableName,
          Item: marshall({
            ...markerKey(scope, verdict.provider, verdict.userId),
            id,
            at: new Date(now).toISOString(),
            expiresAt,
            ...(round ? { round } : {}),
          }),
          // Over the failed round read above only: of two runs at once, one takes the next round.
          ConditionExpression: marker ? 'failed = :t AND id = :prev' : 'attribute_not_exists(pk)',
          ...(marker ? { ExpressionAttributeValues: marshall({ ':t': true, ':prev': marker.id }) } : {}),
        }),
      );
    } catch (error) {
      // Another run took it at the same moment: its note stands (the same ids were recorded).
      if ((error as { name?: string })?.name === 'ConditionalCheckFailedException') return undefined;
      throw error;
    }
    return note;
  }

  /**
   * The response `actionId` (act.ts, `<note id>~<action>`) failed: the account's next leak may
   * respond again. Only while the marker still names that response.
   */
  async failed(scope: Scope, provider: string, account: string, actionId: string): Promise<void> {
    try {
      this.io.onRequest?.('UpdateItem');
      await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall(markerKey(scope, provider, account)),
          UpdateExpression: 'SET failed = :t',
          ConditionExpression: 'id = :id',
          ExpressionAttributeValues: marshall({ ':t': true, ':id': actionId.replace(/~[^~]*$/, '') }),
        }),
      );
    } catch (error) {
      if ((error as { name?: string })?.name !== 'ConditionalCheckFailedException') throw error;
    }
  }

  private async marker(
    scope: Scope,
    provider: string,
    account: string,
  ): Promise<{ id: string; failed?: boolean; round?: number } | undefined> {
    const [found] = await batchGet(this.io, [marshall(markerKey(scope, provider, account))]);
    return found ? (unmarshall(found) as { id: string; failed?: boolean; round?: number }) : undefined;
  }

  /** Counts one response in the hour; false when the hour already has `max`. */
  private async countHour(scope: Scope, hour: number, max: number): Promise<boolean> {
    try {
      this.io.onRequest?.('UpdateItem');
      await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall({ pk: `idautohour#${enc(scope)}#${new Date(hour).toISOString()}`, sk: 'idautohour' }),
          UpdateExpression: 'SET n = if_not_exists(n, :zero) + :one, expiresAt = :exp',
          ConditionExpression: 'attribute_not_exists(n) OR n < :max',
          ExpressionAttributeValues: marshall({
            ':zero': 0,
            ':one': 1,
            ':max': max,
            ':exp': Math.floor((hour + 2 * HOUR) / 1000) + 86_400,
          }),
        }),
      );
      return true;
    } catch (error) {
      if ((error as { name?: string })?.name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }
}
