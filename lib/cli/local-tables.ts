/**
 * Which table of `.data/`'s DynamoDB a local run uses: one per config, so a run with a real config
 * never inherits the demo's cursors, silences, deliveries or audit, and the demo finds its own again.
 *
 * - The built-in demo keeps the table every `.data/` always had, `exposure-alerts`.
 * - A config file gets a table named by its path relative to the folder (never by its content, which
 *   the user edits): a readable slug and 8 hex of the path's SHA-256, within DynamoDB's rules for a
 *   table name ([a-zA-Z0-9_.-], 3 to 255 characters), e.g. `exposure-alerts-alerts.config-0c6e4a1f`.
 * - `TABLE_NAME`, when set, wins (the callers do not ask here then).
 *
 * A `.data/` made before this rule has one table, which a real config may have sent from. The first
 * config file that runs there settles it, once ({@link settleOldTable}): when the old table's
 * delivery records name a destination other than the demo's terminal, that config adopts it (so it
 * re-sends nothing) and the demo gets a fresh table; otherwise it stays the demo's. The outcome is
 * kept in `.data/tables.json`, so a config stays adopted and the others never ask again.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import { DEFAULT_CONFIG_FILE } from '../rules/source.ts';
import { nameFromKey } from '../state/limits.ts';
import { ScanCommand } from '../state/sdk.ts';
import { createDynamoClient } from '../state/table.ts';

/** The demo's table: the one every `.data/` had before tables were per config. */
export const DEMO_TABLE = 'exposure-alerts';
/** The demo's table once a config adopted {@link DEMO_TABLE}. */
export const FRESH_DEMO_TABLE = 'exposure-alerts-demo';
const TABLES_FILE = 'tables.json';

/** `.data/tables.json`: whether the old table was settled, and the tables that are not by rule. */
interface Tables {
  settled?: boolean;
  demo?: string;
  /** Config path (relative, `/`-separated) to its adopted table. */
  configs?: Record<string, string>;
}

type Env = Record<string, string | undefined>;

function readTables(dir: string): Tables {
  try {
    return JSON.parse(readFileSync(resolve(dir, TABLES_FILE), 'utf8')) as Tables;
  } catch {
    return {};
  }
}

/**
 * The config file a run in `cwd` reads (`ALERTS_CONFIG`, else ./alerts.config.json when there, as
 * rules/source.ts decides), relative to `cwd` with `/` separators; undefined for the built-in demo.
 */
export function localConfigPath(env: Env, cwd: string = process.cwd()): string | undefined {
  const given = env.ALERTS_CONFIG?.trim();
  const path = given || (existsSync(resolve(cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined);
  if (!path) return undefined;
  return relative(cwd, resolve(cwd, path)).split(sep).join('/');
}

/**
 * The table named for a config file by its path.
 *
 * @example
 * configTableName('configs/prod.json') // 'exposure-alerts-configs-prod-<8 hex>'
 */
export function configTableName(path: string): string {
  const slug = path
    .replace(/\.json$/i, '')
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 60);
  const hash = createHash('sha256').update(path).digest('hex').slice(0, 8);
  return `${DEMO_TABLE}-${slug ? `${slug}-` : ''}${hash}`;
}

/**
 * The table of `.data/` (`dir`) for a config (its path from {@link localConfigPath}; undefined: the
 * demo), as the rule and `.data/tables.json` say.
 */
export function localTableFor(config: string | undefined, dir: string): string {
  const tables = readTables(dir);
  if (config === undefined) return tables.demo ?? DEMO_TABLE;
  return tables.configs?.[config] ?? configTableName(config);
}

/**
 * Settles, once per `.data/`, whether the config file `config` adopts the table `.data/` had before
 * tables were per config (see the module comment); says so in one line when it does. A no-op once
 * settled, so only the first config file to run there can adopt.
 */
export async function settleOldTable(
  dir: string,
  config: string,
  endpoint: string,
  say: (line: string) => void,
): Promise<void> {
  if (readTables(dir).settled) return;
  const destination = await realDestination(endpoint);
  const tables: Tables = destination
    ? { settled: true, demo: FRESH_DEMO_TABLE, configs: { [config]: DEMO_TABLE } }
    : { settled: true };
  writeFileSync(resolve(dir, TABLES_FILE), `${JSON.stringify(tables, null, 2)}\n`);
  if (destination)
    say(
      `${config} keeps the table ${DEMO_TABLE} of .data/ (its deliveries went to ${destination}), so nothing is sent again; the built-in demo gets a table of its own, ${FRESH_DEMO_TABLE}\n`,
    );
}

/**
 * A destination other than the demo's that the old table's delivery records (one by one, packed,
 * or follow-ups) name, if any; none when there is no such table.
 */
async function realDestination(endpoint: string): Promise<string | undefined> {
  const { demoConfig } = await import('../rules/demo-config.ts');
  const demo = Object.keys(demoConfig.destinations);
  const client = createDynamoClient({ endpoint });
  const prefixes = ['dlv#', 'pack#', 'fu#'];
  const values: Record<string, { S: string }> = {};
  const named = prefixes.map((p, i) => {
    values[`:p${i}`] = { S: p };
    return `begins_with(pk, :p${i})`;
  });
  const demoOwn = prefixes.flatMap((p, i) =>
    demo.map((name, j) => {
      values[`:d${i}_${j}`] = { S: `${p}${name}#` };
      return `begins_with(pk, :d${i}_${j})`;
    }),
  );
  try {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({
          TableName: DEMO_TABLE,
          ProjectionExpression: 'pk',
          FilterExpression: `(${named.join(' OR ')}) AND NOT (${demoOwn.join(' OR ')})`,
          ExpressionAttributeValues: values,
          ...(start ? { ExclusiveStartKey: start as never } : {}),
        }),
      );
      const pk = page.Items?.[0]?.pk?.S;
      if (pk) return nameFromKey(pk.split('#')[1] ?? '');
      start = page.LastEvaluatedKey;
    } while (start);
    return undefined;
  } catch (error) {
    if ((error as { name?: string }).name === 'ResourceNotFoundException') return undefined;
    throw error;
  } finally {
    client.destroy();
  }
}
