/**
 * The local deployment of `npm start` in a folder (`.data/`), found by the other commands run in
 * that folder, so a newcomer's second terminal works with no variable to set:
 * - a running `npm start` records where its DynamoDB, emulator and HTTP API listen in
 *   `.data/local.json` (written when it is up, removed when it stops);
 * - a command that uses the table (or the upstream) and is run where `.data/` is, with none of
 *   DYNAMODB_ENDPOINT, TABLE_NAME or AWS_REGION set, uses that deployment; when `npm start` is not
 *   running, it opens `.data/` itself for its own run (taking the folder's lock: only one process
 *   may hold the data) and closes it after; the table is the running start's, else the one of the
 *   command's own config (cli/local-tables.ts);
 * - a command run beside `npm start`, with neither SECRETS_FILE nor SECRET_ID set, reads the
 *   secrets from the start's SECRETS_FILE;
 * - either way it says so in one line on stderr.
 * The upstream follows the same rule with EXPOSURE_API_URL, EXPOSURE_API_TOKEN and
 * EXPOSURE_API_KEY: when none is set, a command talks to the local emulator.
 *
 * While `start --dry-run` holds the folder, whatever the variables say, a command that would act
 * outside is refused (exit 2), and `poll` and `deliver` run as dry runs on its table
 * ({@link besideDryRun}): trying a config against production from one terminal must not act from
 * the next.
 *
 * `npm start` itself also stands its emulator in for the demo's identity providers: the built-in
 * demo config names them (rules/demo-config.ts, from `Environment.localEmulatorUrl`) and
 * {@link withLocalSecrets} supplies their secrets.
 *
 * It is longer than 300 lines because those rules are one decision each command makes once, at its
 * start (find the folder's deployment, or open, lock and record it), and read best together.
 */

import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Dataset, Tenant } from '../emulator/dataset.ts';
import { DEMO_IDENTITY_SECRETS } from '../emulator/identity/demo-providers.ts';
import { type Environment, readEnvironment } from '../env.ts';
import { UsageError } from '../errors.ts';
import { redactor } from '../log.ts';

export const DATA_DIR = '.data';
/** The emulator `npm start` runs: its seed and where its state persists. */
export const LOCAL_EMULATOR = { seed: 42, stateFile: 'emulator.json', tenant: 'acme' } as const;

/** What a running `npm start` writes to `.data/local.json`. */
export interface LocalDeployment {
  pid: number;
  /** DynamoDB (dynalite) endpoint, and the table. */
  dynamodb: string;
  tableName: string;
  /**
   * The emulator and its demo credentials, when `npm start` runs it: a tenant's token, or (for a
   * config with `tenants`) an API key that acts for the emulator's MSSP tenants.
   */
  upstream?: { url: string; token?: string; apiKey?: string };
  /** The HTTP API, and the demo bearer token made for this run when no apiClients are configured. */
  api?: { url: string; token?: string };
  /** `start --dry-run`: the folder's other commands act on nothing outside ({@link besideDryRun}). */
  dryRun?: boolean;
  /** The run's SECRETS_FILE, absolute: the folder's commands read the same secrets. */
  secretsFile?: string;
}

/**
 * The emulator's demo credentials for the folder's config: the demo tenant's token, or, when the
 * config has `tenants`, the emulator's MSSP key, which acts for two tenants of one organization
 * (Globex, its default, and Initech) as an MSSP's key does.
 */
export async function localCredentials(env: Env, dataset: Dataset): Promise<{ env: Env; tenants: Tenant[] }> {
  const [{ loadAlertsConfig }, { MSSP_API_KEY }] = await Promise.all([
    import('../rules/source.ts'),
    import('../emulator/seeds.ts'),
  ]);
  const loaded = await loadAlertsConfig(readEnvironment(env), () => {}).catch(() => undefined);
  if (loaded?.config.tenants?.length)
    return {
      env: { EXPOSURE_API_KEY: MSSP_API_KEY.key },
      tenants: MSSP_API_KEY.tenants.map((id) => dataset.tenant(id)),
    };
  const tenant = dataset.tenant(LOCAL_EMULATOR.tenant);
  return { env: { EXPOSURE_API_TOKEN: tenant.token }, tenants: [tenant] };
}

/**
 * The secret object of a run with npm start's emulator: the demo identity providers' secrets (which
 * the demo config names, and the emulator accepts) beside the user's own, which win a clash.
 * Without the emulator, `secrets` as they are.
 */
export function withLocalSecrets<S extends Record<string, unknown>>(
  env: Pick<Environment, 'localEmulatorUrl'>,
  secrets: S,
): S {
  if (!env.localEmulatorUrl) return secrets;
  // Fixed strings that open only the local stand-in; kept out of logs all the same, as any secret.
  for (const value of Object.values(DEMO_IDENTITY_SECRETS)) redactor.add(value);
  return { ...DEMO_IDENTITY_SECRETS, ...secrets };
}

export interface Needs {
  table?: boolean;
  upstream?: boolean;
}

type Env = Record<string, string | undefined>;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<dir>/lock` for this process, or says who holds it. A lock left by a process that is gone
 * is taken over. Returns the release.
 */
export function lockDataDir(dir: string, holder = 'exposure-alerts start'): () => void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, JSON.stringify({ pid: process.pid, holder, since: new Date().toISOString() }));
      closeSync(fd);
      return removedAtExit(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let held: { pid?: unknown; holder?: unknown } = {};
    try {
      held = JSON.parse(readFileSync(file, 'utf8')) as typeof held;
    } catch {
      // Unreadable: written by a process that died mid-write. Taken over below.
    }
    const pid = Number(held.pid);
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
      const who = typeof held.holder === 'string' ? held.holder : 'exposure-alerts start';
      const what = who === 'exposure-alerts start' ? 'stop it first' : 'wait for it to finish';
      throw new Error(
        `another ${who} (pid ${pid}) holds ${DATA_DIR}/ in ${dirname(dir)}: ${what}${holder === 'exposure-alerts start' ? ', or start this one in another folder' : ''}`,
      );
    }
    rmSync(file, { force: true });
  }
  throw new Error(`cannot take the lock ${file}; remove it if no exposure-alerts process is running`);
}

/** Records the running deployment for the folder's other commands (readable by its owner only). */
export function recordLocal(dir: string, deployment: LocalDeployment): () => void {
  const file = join(dir, 'local.json');
  writeFileSync(file, `${JSON.stringify(deployment, null, 2)}\n`, { mode: 0o600 });
  return removedAtExit(file);
}

/**
 * Removes `file` when called, or when the process exits first: a second Ctrl-C ends the process at
 * once (main.ts), past every cleanup but `exit` listeners, which run synchronously.
 */
function removedAtExit(file: string): () => void {
  const remove = () => {
    process.off('exit', remove);
    rmSync(file, { force: true });
  };
  process.on('exit', remove);
  return remove;
}

/** The running `npm start` of `dir`, if there is one. */
export function runningLocal(dir: string): LocalDeployment | undefined {
  try {
    const found = JSON.parse(readFileSync(join(dir, 'local.json'), 'utf8')) as LocalDeployment;
    return Number.isInteger(found.pid) && alive(found.pid) ? found : undefined;
  } catch {
    return undefined;
  }
}

const set = (env: Env, name: string) => (env[name]?.trim() ?? '') !== '';

/**
 * What a command may do while `start --dry-run` holds the folder (see the module comment): undefined
 * when no dry run does; `{ dryRun: true }` for one that runs as a dry run (`beside: 'dry'`) on the
 * dry run's table, said in one line. Throws a UsageError (exit 2) saying why for one that would act
 * outside, and for a dry-run command pointed at another table, where a dry run's records do not
 * belong.
 */
export function besideDryRun(
  command: { path: string[]; beside?: 'refuse' | 'dry' },
  env: Env,
  say: (line: string) => void,
  cwd: string = process.cwd(),
): { dryRun: true } | undefined {
  if (!command.beside) return undefined;
  const running = runningLocal(resolve(cwd, DATA_DIR));
  if (!running?.dryRun) return undefined;
  const name = command.path.join(' ');
  const held = `a dry run (npm start -- --dry-run, pid ${running.pid}) holds ${DATA_DIR}/ here`;
  if (command.beside === 'refuse')
    throw new UsageError(
      `${held}: ${name} would act outside, so nothing was done; stop the dry run (or run ${name} from another folder) to act`,
    );
  const given = TABLE_VARIABLES.filter((n) => set(env, n));
  if (given.length)
    throw new UsageError(
      `${held}: ${name} runs here only as a dry run on its table, but ${given.join(' and ')} point${given.length > 1 ? '' : 's'} it at another; unset ${given.length > 1 ? 'them' : 'it'}, or run ${name} from another folder`,
    );
  say(`${held}: ${name} runs as a dry run on its table, sending nothing and acting on nothing outside\n`);
  return { dryRun: true };
}

/** Set, any of these says "not the local DynamoDB": the command then goes to AWS's. */
const TABLE_VARIABLES = ['DYNAMODB_ENDPOINT', 'TABLE_NAME', 'AWS_REGION'] as const;

/**
 * The way to the local DynamoDB, for a failure to reach AWS's (no region, no credentials): where
 * `.data/` is, a variable set is what took the command away from it, so that is what to unset;
 * elsewhere, the folder of `npm start` is.
 */
export function localHint(env: Env, needs: Needs, cwd: string = process.cwd()): string | undefined {
  if (!needs.table || !existsSync(resolve(cwd, DATA_DIR))) return undefined;
  const given = TABLE_VARIABLES.filter((n) => set(env, n));
  if (given.length === 0 || given.includes('DYNAMODB_ENDPOINT')) return undefined;
  const names = given.join(' and ');
  return `or unset ${names}: set without DYNAMODB_ENDPOINT, ${given.length > 1 ? 'they point' : 'it points'} this command at AWS, not at the local DynamoDB of npm start in this folder`;
}

/**
 * The environment a command runs with in the current folder (see the module comment), and what to
 * close after it; undefined when nothing local applies.
 */
export async function useLocalDeployment(
  env: Env,
  needs: Needs,
  say: (line: string) => void,
  cwd: string = process.cwd(),
): Promise<{ env: Env; close: () => Promise<void> } | undefined> {
  const table = needs.table && !TABLE_VARIABLES.some((n) => set(env, n));
  const upstream =
    needs.upstream &&
    !['EXPOSURE_API_URL', 'EXPOSURE_API_TOKEN', 'EXPOSURE_API_KEY'].some((n) => set(env, n));
  const dir = resolve(cwd, DATA_DIR);
  if (!existsSync(dir)) return undefined;
  const running = runningLocal(dir);
  // Any command may read the destinations' secrets: it reads them where the running start does.
  const secretsFile =
    running?.secretsFile && !['SECRETS_FILE', 'SECRET_ID'].some((n) => set(env, n))
      ? running.secretsFile
      : undefined;
  if (!table && !upstream && !secretsFile) return undefined;
  const out: Env = { ...env };
  if (running) {
    const uses: string[] = [];
    if (table) {
      Object.assign(out, { DYNAMODB_ENDPOINT: running.dynamodb, TABLE_NAME: running.tableName });
      uses.push(`DynamoDB at ${running.dynamodb}`);
    }
    if (secretsFile) {
      out.SECRETS_FILE = secretsFile;
      uses.push(`SECRETS_FILE ${secretsFile}`);
    }
    if (upstream && running.upstream) {
      Object.assign(out, {
        EXPOSURE_API_URL: running.upstream.url,
        ...(running.upstream.apiKey
          ? { EXPOSURE_API_KEY: running.upstream.apiKey }
          : { EXPOSURE_API_TOKEN: running.upstream.token }),
      });
      uses.push(`the emulator at ${running.upstream.url}`);
    }
    if (!uses.length) return undefined;
    say(`using the npm start running in this folder (pid ${running.pid}): ${uses.join(', ')}\n`);
    return { env: out, close: async () => {} };
  }
  // Stopped: this command opens the folder's data itself, for its own run. What that takes is
  // loaded here, not by every command run (build.mjs).
  const [{ startDynalite }, { startEmulator }, { localConfigPath, localTableFor, settleOldTable }] =
    await Promise.all([
      import('../state/local.ts'),
      import('../emulator/index.ts'),
      import('./local-tables.ts'),
    ]);
  const unlock = lockDataDir(dir, 'exposure-alerts command');
  const closers: (() => Promise<void>)[] = [async () => unlock()];
  const close = async () => {
    for (const c of closers) await c().catch(() => {});
  };
  try {
    const uses: string[] = [];
    if (table) {
      mkdirSync(join(dir, 'dynamodb'), { recursive: true });
      const dynamo = await startDynalite({ path: join(dir, 'dynamodb') });
      closers.unshift(() => dynamo.close());
      // The table of this command's config, as npm start with that config would use.
      const config = localConfigPath(env, cwd);
      if (config) await settleOldTable(dir, config, dynamo.endpoint, say);
      Object.assign(out, { DYNAMODB_ENDPOINT: dynamo.endpoint, TABLE_NAME: localTableFor(config, dir) });
      uses.push('its DynamoDB');
    }
    if (upstream) {
      const emulator = await startEmulator({
        seed: LOCAL_EMULATOR.seed,
        stateFile: join(dir, LOCAL_EMULATOR.stateFile),
      });
      closers.unshift(() => emulator.close());
      Object.assign(out, {
        EXPOSURE_API_URL: emulator.url,
        ...(await localCredentials(out, emulator.emulator.dataset)).env,
      });
      uses.push('its emulator');
    }
    say(
      `npm start is not running in this folder: this command opened ${uses.join(' and ')} from ${DATA_DIR}/\n`,
    );
    return { env: out, close };
  } catch (error) {
    await close();
    throw error;
  }
}
