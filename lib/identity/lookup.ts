/**
 * Longer than 300 lines because the step's bounds (time, rate, rests, one lookup a login) and
 * the automatic response it decides with each verdict act on one another, and read best whole.
 *
 * The identity step of a credential page (docs/identity.md): before a page's items are
 * routed, each credential whose login is in a provider's domains gets its verdict, kept with the
 * item as `_identity`. In order:
 *
 * 1. An item decided before (a re-walk, another stream) keeps its stored verdict (store.ts `idv`).
 * 2. The others' logins are read from the table: a provider's answer is kept an hour
 *    (`unavailable` 5 minutes), so 45 leaks of one person cost one lookup.
 * 3. The logins still open are looked up, each once per run however many pages or streams ask
 *    (two runs at once may both ask, never more), at most CONCURRENCY at once per provider.
 * 4. The verdicts are decided (verdict.ts) and stored before the items are routed.
 *
 * What bounds it, and what each bound costs: a lookup's answer gets 3 seconds; a cycle gets 30
 * seconds of lookups (wall time, however many run at once, the waits for turns of a provider's
 * rate included); each request takes its turn of the provider's lane, shared by every run
 * (lanes.ts), which a 429 or a spent rate pauses for all until the time the provider named; a
 * provider that refuses our credentials, or failed FAILURES_TO_REST times in a row, is not asked
 * again this cycle. A login not looked up for any of these reasons is `unknown` (reason
 * `unavailable`), and its alert goes on: no item is held, lost or sent twice because of a provider. What is excluded for good: a better verdict for that item (it
 * was decided once); the login is looked up again for later items once its 5 minutes pass.
 * A baseline walk sends nothing, so it looks nothing up.
 */
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { TenantRef } from '../model.ts';
import { itemKey } from '../poll/ids.ts';
import { domainWithin } from '../rules/match.ts';
import type { Credential, EventItem } from '../upstream/schemas.ts';
import type { AutoResponse } from './auto.ts';
import type { ProviderClient } from './client.ts';
import type { IdentityConfig } from './schema.ts';
import { type IdentityStore, type LoginRef, loginKey, type Scope, scopeOf } from './store.ts';
import { type Answer, decideVerdict, domainOfLogin, leakDateOf, loginOf } from './verdict.ts';
import { ACCOUNT_ACTIONS, type AccountAction, type IdentityVerdict } from './words.ts';

export const LOOKUP_TIMEOUT_MS = 3_000;
export const CYCLE_LOOKUP_MS = 30_000;
/** Lookups in flight at once, per provider (Okta allows 75 per org; Graph throttles by load). */
export const CONCURRENCY = 8;
/** Failures in a row after which a provider rests for the rest of the cycle. */
export const FAILURES_TO_REST = 5;

export interface IdentityDeps {
  store: IdentityStore;
  /** Each scope's providers, in config order: a login goes to the first whose domains cover it. */
  providers: ReadonlyMap<Scope, readonly ProviderClient[]>;
  fetch: typeof fetch;
  /** Real time, ms: waits, timeouts and providers' resets are real. */
  now(): number;
  logger: Logger;
  metrics: Metrics;
  /** A provider refuses our credentials: reported once for the deployment (index.ts). */
  refused(scope: Scope, provider: string, message: string): Promise<void>;
  /** A provider answered: a refusal reported before is over. */
  accepted(scope: Scope, provider: string): Promise<void>;
  lookupTimeoutMs?: number;
  cycleLookupMs?: number;
  concurrency?: number;
  /** Each scope's `identity.auto`, and where its decisions are kept; none in a dry run. */
  auto?: { config: ReadonlyMap<Scope, NonNullable<IdentityConfig['auto']>>; response: AutoResponse };
  /** Records an automatic action (lib/identity/act.ts); the cycle takes it after its delivery pass. */
  recordAuto?(request: { id: string; action: AccountAction; login: string; scope: Scope }): Promise<void>;
  /** Takes the automatic actions recorded this cycle (set with the account actions: index.ts). */
  runAuto?(ids: readonly string[]): Promise<void>;
}

/** What the step needs of a stream. */
export interface IdentityStream {
  tenant?: TenantRef;
  exclusive: boolean;
}

export interface IdentityOptions {
  baselining: boolean;
  /**
   * Whether an item with this verdict would be sent (routed somewhere, not silenced): only those
   * get an automatic response. Without it, none is decided.
   */
  wouldSend?(item: Credential): boolean;
  /** ms since the epoch: no lookup runs past it (the stream's deadline). */
  deadline: number;
  signal?: AbortSignal;
}

type Item = EventItem | Credential;

interface Wanted {
  item: Credential;
  key: string;
  ref: LoginRef;
  client: ProviderClient;
}

/** A semaphore: at most `limit` holders at once. */
class Slots {
  private held = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  async take(): Promise<() => void> {
    if (this.held >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.held += 1;
    return () => {
      const next = this.waiting.shift();
      if (next) next();
      else this.held -= 1;
    };
  }
}

const providerId = (scope: Scope, provider: string) => `${scope}#${provider}`;

/** One per run: lookups in flight and slots (the providers' pauses are their lanes'). A cycle takes its budget from `cycle()`. */
export class IdentityLookups {
  readonly inFlight = new Map<string, Promise<Answer>>();
  private readonly slots = new Map<string, Slots>();
  readonly acceptedOnce = new Set<string>();

  constructor(readonly deps: IdentityDeps) {}

  slotsOf(id: string): Slots {
    const found = this.slots.get(id);
    if (found) return found;
    const slots = new Slots(this.deps.concurrency ?? CONCURRENCY);
    this.slots.set(id, slots);
    return slots;
  }

  /** Whether a scope has providers at all (a stream of a scope without skips the step). */
  covers(tenant: TenantRef | undefined): boolean {
    return (this.deps.providers.get(scopeOf(tenant?.id))?.length ?? 0) > 0;
  }

  cycle(): IdentityCycle {
    return new IdentityCycle(this);
  }
}

/** One cycle's lookups: its 30 seconds, the providers resting, and what `status` hears of it. */
export class IdentityCycle {
  private spentMs = 0;
  private active = 0;
  private activeSince = 0;
  private readonly resting = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly looked = new Set<string>();
  private readonly autoIds: string[] = [];

  constructor(private readonly run: IdentityLookups) {}

  private get deps() {
    return this.run.deps;
  }

  /** Lookup time left in this cycle. */
  private left(): number {
    const running = this.active ? this.deps.now() - this.activeSince : 0;
    return (this.deps.cycleLookupMs ?? CYCLE_LOOKUP_MS) - this.spentMs - running;
  }

  /** `items` with a verdict on each credential a provider of the stream's scope covers. */
  async verdicts(stream: IdentityStream, items: readonly Item[], options: IdentityOptions): Promise<Item[]> {
    const scope = scopeOf(stream.tenant?.id);
    const clients = this.deps.providers.get(scope) ?? [];
    if (!clients.length || options.baselining) return [...items];
    const wanted: Wanted[] = [];
    for (const item of items) {
      const credential = item as Credential;
      if (typeof credential.identity_name !== 'string') continue;
      const login = loginOf(credential);
      const domain = domainOfLogin(login);
      const client = clients.find((c) => c.domains.some((d) => domainWithin(domain, d)));
      if (!client) continue;
      const key = itemKey(String(credential.id), stream.tenant?.id);
      wanted.push({ item: credential, key, ref: { scope, provider: client.name, login }, client });
    }
    if (!wanted.length) return [...items];
    const decided = await this.deps.store.verdicts([...new Set(wanted.map((w) => w.key))]);
    const open = wanted.filter((w) => !decided.has(w.key));
    if (open.length) {
      const answers = await this.answers(open, options);
      const fresh = new Map<string, IdentityVerdict>();
      for (const w of open) {
        const answer = answers.get(loginKey(w.ref.scope, w.ref.provider, w.ref.login).pk) ?? {
          unavailable: 'not looked up',
        };
        fresh.set(w.key, decideVerdict(w.client.name, answer, leakDateOf(w.item)));
      }
      await this.autoResponses(scope, open, fresh, options);
      const logins = new Map(open.map((w) => [w.key, w.ref.login]));
      const kept = await this.deps.store.keepVerdicts(
        [...fresh].map(([key, verdict]) => ({ key, verdict, scope, login: logins.get(key) as string })),
        stream.exclusive,
      );
      for (const [key, verdict] of kept) {
        decided.set(key, verdict);
        this.deps.metrics.count('IdentityVerdicts', 1, { verdict: verdict.verdict });
      }
    }
    const byItem = new Map(wanted.map((w) => [w.item, w.key]));
    return items.map((item) => {
      const key = byItem.get(item as Credential);
      const verdict = key === undefined ? undefined : decided.get(key);
      return verdict ? ({ ...item, _identity: verdict } as Item) : item;
    });
  }

  /**
   * The automatic response of each fresh `at_risk` verdict that would be sent (auto.ts decides,
   * once per account): noted on the verdict, its actions recorded for after the delivery pass.
   */
  private async autoResponses(
    scope: Scope,
    open: readonly Wanted[],
    fresh: Map<string, IdentityVerdict>,
    options: IdentityOptions,
  ): Promise<void> {
    const auto = this.deps.auto?.config.get(scope);
    const response = this.deps.auto?.response;
    if (!auto || !response || !options.wouldSend || !this.deps.recordAuto) return;
    for (const w of open) {
      const verdict = fresh.get(w.key);
      if (verdict?.verdict !== 'at_risk' || verdict.auto) continue;
      if (!options.wouldSend({ ...w.item, _identity: verdict } as Credential)) continue;
      const usable = ACCOUNT_ACTIONS.filter((a) => !w.client.cannot(a));
      const recordAuto = this.deps.recordAuto;
      const ids = (note: { id: string; actions: AccountAction[] }) =>
        note.actions.map((action) => ({ id: `${note.id}~${action}`, action }));
      const note = await response.decide(scope, auto, verdict, w.ref.login, usable, async (taken) => {
        for (const { id, action } of ids(taken)) await recordAuto({ id, action, login: w.ref.login, scope });
      });
      if (!note) continue;
      fresh.set(w.key, { ...verdict, auto: note });
      if ('actions' in note) this.autoIds.push(...ids(note).map((a) => a.id));
    }
  }

  /** Takes the automatic actions decided this cycle: after its delivery pass, so follow-ups find the alerts sent. */
  async respond(): Promise<void> {
    if (!this.autoIds.length || !this.deps.runAuto) return;
    const ids = this.autoIds.splice(0);
    await this.deps
      .runAuto(ids)
      .catch((error: unknown) =>
        this.deps.logger.warn('automatic responses failed; a later pass finishes them', { error }),
      );
  }

  /**
   * The answers for the open logins: the table's, then lookups for the rest (kept in the table).
   * A login another page or stream of this run is answering is waited for, not asked again: its
   * entry in `inFlight` is set before the table is read and stays until the answer is kept, so
   * pages whose lookups overlap (poll/stream.ts) never ask one login twice.
   */
  private async answers(open: readonly Wanted[], options: IdentityOptions): Promise<Map<string, Answer>> {
    const answers = new Map<string, Answer>();
    const waits: Promise<void>[] = [];
    const mine = new Map<string, { w: Wanted; entry: Promise<Answer>; settle(a: Promise<Answer>): void }>();
    for (const w of open) {
      const pk = loginKey(w.ref.scope, w.ref.provider, w.ref.login).pk;
      if (mine.has(pk)) continue;
      const pending = this.run.inFlight.get(pk);
      if (pending) {
        waits.push(this.timed(() => pending).then((a) => void answers.set(pk, a)));
        continue;
      }
      let settle: (a: Promise<Answer>) => void = () => {};
      const entry = new Promise<Answer>((resolve) => {
        settle = resolve;
      });
      entry.catch(() => {}); // a failed read fails each caller through `waits`, not as unhandled
      this.run.inFlight.set(pk, entry);
      mine.set(pk, { w, entry, settle });
    }
    const kept: { ref: LoginRef; answer: Answer }[] = [];
    if (mine.size) {
      const stored = this.deps.store.answers([...mine.values()].map((m) => m.w.ref));
      for (const [pk, m] of mine) {
        const answer = stored.then(async (found) => {
          const known = found.get(pk);
          if (known) return known;
          const got = await this.timed(() => this.lookup(m.w, options));
          if (got.attempted) kept.push({ ref: m.w.ref, answer: got.answer });
          return got.answer;
        });
        m.settle(answer);
        waits.push(answer.then((a) => void answers.set(pk, a)));
      }
    }
    const outcomes = await Promise.allSettled(waits);
    try {
      if (kept.length) await this.deps.store.keepAnswers(kept);
    } finally {
      for (const [pk, m] of mine) if (this.run.inFlight.get(pk) === m.entry) this.run.inFlight.delete(pk);
    }
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
    return answers;
  }

  /** Runs `work` as lookup time: the cycle's budget counts the time any lookup was under way. */
  private async timed<T>(work: () => Promise<T>): Promise<T> {
    if (this.active++ === 0) this.activeSince = this.deps.now();
    try {
      return await work();
    } finally {
      if (--this.active === 0) this.spentMs += this.deps.now() - this.activeSince;
    }
  }

  /** One login's lookup, within every bound of the module comment. */
  private async lookup(w: Wanted, options: IdentityOptions): Promise<{ answer: Answer; attempted: boolean }> {
    const { deps } = this;
    const id = providerId(w.ref.scope, w.ref.provider);
    const skip = (why: string) => ({ answer: { unavailable: why }, attempted: false });
    const release = await this.run.slotsOf(id).take();
    try {
      if (this.resting.has(id)) return skip('the provider is not asked again this cycle');
      // The wait for a turn of the provider's rate (the client's lane) counts toward the cycle's
      // lookup time and the stream's deadline; only the provider's answer has the 3 seconds.
      // Whole ms: AbortSignal.timeout refuses a fraction (a stream's deadline may have one).
      const ms = Math.floor(Math.min(this.left(), options.deadline - deps.now()));
      if (ms <= 0) return skip('the cycle’s lookup time is spent');
      if (options.signal?.aborted) return skip('the run is stopping');
      const timeout = AbortSignal.timeout(ms);
      const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
      deps.metrics.count('IdentityLookups', 1, { provider: w.ref.provider });
      this.looked.add(id);
      const result = await w.client.lookup(w.ref.login, {
        fetch: deps.fetch,
        now: deps.now,
        signal,
        deadline: deps.now() + ms,
        answerMs: deps.lookupTimeoutMs ?? LOOKUP_TIMEOUT_MS,
      });
      if ('answer' in result) {
        this.failures.delete(id);
        if (!this.run.acceptedOnce.has(id)) {
          this.run.acceptedOnce.add(id);
          await deps.accepted(w.ref.scope, w.ref.provider).catch(() => {});
        }
        return { answer: result.answer, attempted: true };
      }
      deps.metrics.count('IdentityLookupFailures', 1, { provider: w.ref.provider });
      if ('refused' in result) {
        if (!this.resting.has(id)) {
          this.resting.add(id);
          this.run.acceptedOnce.delete(id);
          deps.metrics.count('IdentityProviderRefused', 1, { provider: w.ref.provider });
          await deps.refused(w.ref.scope, w.ref.provider, result.refused).catch((error: unknown) =>
            deps.logger.warn('could not report a refusing identity provider; the next cycle tries again', {
              error,
            }),
          );
        }
        return { answer: { unavailable: result.refused }, attempted: true };
      }
      const failures = (this.failures.get(id) ?? 0) + 1;
      this.failures.set(id, failures);
      if (failures >= FAILURES_TO_REST && !this.resting.has(id)) {
        this.resting.add(id);
        deps.logger.warn(
          'an identity provider failed lookups in a row; it rests for the rest of this cycle',
          {
            provider: w.ref.provider,
            scope: w.ref.scope,
            error: result.failed,
          },
        );
      } else
        deps.logger.debug('an identity lookup failed; the login is unknown for 5 minutes', {
          provider: w.ref.provider,
          error: result.failed,
        });
      return { answer: { unavailable: result.failed }, attempted: true };
    } finally {
      release();
    }
  }

  /** Notes each provider this cycle asked (for `status`); called once, at the cycle's end. */
  async finish(): Promise<void> {
    const at = new Date(this.deps.now());
    await Promise.all(
      [...this.looked].map((id) => {
        const [scope = '', provider = ''] = id.split('#');
        return this.deps.store
          .looked(scope === 'top' ? 'top' : Number(scope), provider, at)
          .catch((error: unknown) =>
            this.deps.logger.warn('could not note an identity provider’s last lookup', { error }),
          );
      }),
    );
  }
}
