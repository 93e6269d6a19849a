/**
 * The config reference from the schema and its descriptions (config-docs.ts): every key's path
 * (`schemaKeys`), its documentation (`docFor`, the longest suffix with an entry), the JSON Schema
 * with descriptions (`config schema`), the Markdown page (`config reference`, docs/config.md), and
 * a config written out with a comment on each key. Only the CLI loads it.
 */
import { CONFIG_DOCS, type KeyDoc } from './config-docs.ts';
import { configJsonSchema } from './schema.ts';

/** The documentation of the key at `path`: its own entry, else the longest suffix's. */
export function docFor(path: string): KeyDoc | undefined {
  const plain = path.replace(/\{[a-z]+\}/g, '');
  for (const candidate of [path, plain]) {
    const parts = candidate.split('.');
    for (let i = 0; i < parts.length; i++) {
      const key = parts
        .slice(i)
        .join('.')
        .replace(/^[^.]*\[\]\./, '');
      const doc = CONFIG_DOCS[parts.slice(i).join('.')] ?? CONFIG_DOCS[key];
      if (doc) return doc;
    }
  }
  return undefined;
}

export interface SchemaKey {
  path: string;
  node: Record<string, unknown>;
  required: boolean;
}

/**
 * Every key of a JSON Schema, depth first, with its path (`destinations.<name>{slack}.url` inside
 * one branch of a discriminated union, `[]` for array items).
 */
export function schemaKeys(schema: Record<string, unknown>): SchemaKey[] {
  const keys: SchemaKey[] = [];
  const walk = (node: Record<string, unknown> | undefined, path: string) => {
    if (!node || typeof node !== 'object') return;
    const properties = node.properties as Record<string, Record<string, unknown>> | undefined;
    const required = new Set((node.required as string[] | undefined) ?? []);
    for (const [name, child] of Object.entries(properties ?? {})) {
      const here = path ? `${path}.${name}` : name;
      keys.push({ path: here, node: child, required: required.has(name) });
      walk(child, here);
    }
    if (node.items && typeof node.items === 'object')
      walk(node.items as Record<string, unknown>, `${path}[]`);
    const extra = node.additionalProperties;
    if (extra && typeof extra === 'object') walk(extra as Record<string, unknown>, `${path}.<name>`);
    for (const union of ['anyOf', 'oneOf'] as const) {
      for (const branch of (node[union] as Record<string, unknown>[] | undefined) ?? []) {
        const kind = (branch.properties as { type?: { const?: string } } | undefined)?.type?.const;
        walk(branch, kind && union === 'oneOf' ? `${path}{${kind}}` : path);
      }
    }
  };
  walk(schema, '');
  return keys;
}

/** `config schema`: the JSON Schema with every key's description (and an example where there is one). */
export function documentedJsonSchema(): Record<string, unknown> {
  const schema = configJsonSchema();
  for (const { path, node } of schemaKeys(schema)) {
    // A secret's name is the one its own key's example uses, as on docs/config.md, not one for all.
    const doc = secretDoc(path) ?? docFor(path);
    if (!doc) continue;
    node.description = doc.text.replace(/`/g, '');
    if (doc.example !== undefined) node.examples = [doc.example];
  }
  return schema;
}

/** A key's type as a reader wants it: `string`, `one of: masked, hidden, clear`, `string or { secret }`. */
function typeOf(node: Record<string, unknown>): string {
  if (Array.isArray(node.enum)) return `one of: ${(node.enum as unknown[]).join(', ')}`;
  if (node.const !== undefined) return `\`${String(node.const)}\``;
  const union = (node.anyOf ?? node.oneOf) as Record<string, unknown>[] | undefined;
  if (union) {
    const kinds = union.map((b) =>
      (b.properties as Record<string, unknown> | undefined)?.secret ? '{ secret }' : typeOf(b),
    );
    return [...new Set(kinds)].join(' or ');
  }
  const type = node.type;
  if (type === 'array') {
    const items = node.items as Record<string, unknown> | undefined;
    return `list of ${items ? typeOf(items) : 'values'}`;
  }
  if (type === 'object' && node.additionalProperties && typeof node.additionalProperties === 'object')
    return 'map of name to value';
  return typeof type === 'string' ? (type === 'integer' ? 'whole number' : type) : 'value';
}

/**
 * A `{ "secret": NAME }` key's own entry, its example the name its parent's example uses
 * (`eventsHeartbeat` for `heartbeat.events.secret`), so the page does not show one name for all.
 */
function secretDoc(path: string): KeyDoc | undefined {
  if (!path.endsWith('.secret')) return undefined;
  const generic = docFor(path);
  if (!generic) return undefined;
  const named = (docFor(path.slice(0, -'.secret'.length))?.example as { secret?: unknown } | undefined)
    ?.secret;
  if (typeof named === 'string') return { ...generic, example: named };
  // No name in the parent's example: one made of the kind and the key (`emailUrl`, `webhookHeaders`).
  const kind = /\{([a-z]+)\}/.exec(path)?.[1];
  const parts = path
    .replace(/\{[a-z]+\}|\[\]/g, '')
    .split('.')
    .filter((part) => part !== '<name>' && part !== 'secret');
  const words = [kind ?? parts.at(-2) ?? '', parts.at(-1) ?? 'value'].filter(Boolean);
  const name = words.map((w, i) => (i ? w.charAt(0).toUpperCase() + w.slice(1) : w)).join('');
  return { ...generic, example: name };
}

/** A paragraph wrapped at LINE_MAX. */
const para = (text: string) => wrap(text).replace(/\n {2}/g, '\n');

/** A type longer than this is written with the key's meaning instead of in the table. */
const TYPE_CELL_MAX = 36;
/** Where a line of prose on the page is wrapped. */
const LINE_MAX = 100;

/**
 * `text` wrapped at LINE_MAX as a list item (continuation lines indented two spaces), breaking only
 * at spaces outside code spans, so an example's JSON stays whole.
 */
function wrap(text: string): string {
  const words: string[] = [];
  let open = false;
  for (const part of text.split(' ')) {
    if (open) words[words.length - 1] += ` ${part}`;
    else words.push(part);
    if ((part.match(/`/g)?.length ?? 0) % 2 === 1) open = !open;
  }
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line && line.length + 1 + word.length > LINE_MAX) {
      lines.push(line);
      line = `  ${word}`;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join('\n');
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const json = (value: unknown) => `\`${JSON.stringify(value)}\``;

/**
 * docs/config.md: every key of the config, with its type, default, meaning and an example, in the
 * order of the schema. `npm run docs` writes it; a test checks it is current.
 */
export function configReference(example?: unknown): string {
  const schema = configJsonSchema();
  const rows = schemaKeys(schema).map(({ path, node, required }) => {
    const kind = /\{([a-z]+)\}/.exec(path)?.[1];
    const shown = path.replace(/\{[a-z]+\}/g, '');
    const doc = secretDoc(path) ?? docFor(path);
    const type = typeOf(node);
    // A long list of values would widen the whole table: it goes with the meaning, below it.
    const longType = type.length > TYPE_CELL_MAX;
    const example = doc?.example !== undefined ? ` Example: ${json(doc.example)}.` : '';
    return {
      section: path.split(/[.[]/)[0] ?? path,
      kind,
      // The map whose entries have a `type`: `destinations`, `identity.providers`.
      owner: kind ? path.slice(0, path.indexOf('{')).replace(/\.<name>$/, '') : undefined,
      line: `| \`${shown}\`${kind ? ` (${kind})` : ''} | ${longType ? 'see below' : cell(type)} | ${
        node.default !== undefined ? json(node.default) : required ? 'required' : ''
      } |`,
      meaning: wrap(
        `- \`${shown}\`: ${doc?.text ?? ''}${longType ? ` (${type})` : ''}.${example}`.replace(
          /\.\.( |$)/g,
          '.$1',
        ),
      ),
    };
  });
  const out = [
    '# The alert config, key by key',
    '',
    para(
      'One JSON file (`alerts.config.json`, or the file `ALERTS_CONFIG` names), checked when a run starts and by `config validate`; `config schema` prints its JSON Schema with these descriptions, for editors. Keys not listed here are refused, with their path.',
    ),

    '',
    para(
      'This page is written by `npm run docs` from the schema itself (`lib/rules/schema.ts`) and the descriptions in `lib/rules/config-docs.ts` (`lib/rules/config-reference.ts` writes it); a test fails when a key has no description or this page is out of date.',
    ),

    '',
    para(
      '`<name>` stands for a name you choose (a destination, a header). A value given as `{ "secret": "NAME" }` is taken from the secret object (`SECRET_ID` on AWS, `SECRETS_FILE` locally). Durations are ISO 8601 (`PT24H`, `P7D`) or the short form (`24h`, `7d`, `30m`, `1h30m`); times are ISO 8601 with a time zone (`2026-12-31T00:00:00Z`).',
    ),
  ];
  let section = '';
  let kind: string | undefined;
  const header = ['| key | type | default |', '|---|---|---|'];
  // Each section: a narrow table of keys, types and defaults, then what each key does, wrapped,
  // so no line of the page runs much past 100 characters (a table row cannot wrap).
  let meanings: string[] = [];
  const flush = () => {
    if (meanings.length) out.push('', ...meanings);
    meanings = [];
  };
  for (const row of rows) {
    if (row.section !== section || row.kind !== kind) {
      flush();
      // Back in a section after its kinds' tables (a tenant's keys after its identity providers').
      const resumed = row.section === section && !row.kind;
      section = row.section;
      kind = row.kind;
      out.push(
        '',
        kind
          ? `### \`${row.owner}\`: type \`${kind}\``
          : resumed
            ? `### \`${section}\`, continued`
            : `## \`${section}\``,
        '',
        ...header,
      );
    }
    out.push(row.line);
    meanings.push(row.meaning);
  }
  flush();
  if (example !== undefined)
    out.push(
      '',
      '## An annotated example',
      '',
      'The deploy guide’s example (`infra/alerts.config.example.json`), each key with what it does:',
      '',
      '```jsonc',
      annotate(example),
      '```',
    );
  return `${out.join('\n')}\n`;
}

/**
 * A config written out with a comment on each key saying what it does (JSON with comments, for
 * reading: the file itself stays plain JSON).
 */
export function annotate(config: unknown): string {
  const lines: string[] = [];
  const comment = (path: string) => {
    const doc = docFor(path);
    if (!doc) return '';
    const text = doc.text.replace(/`/g, '');
    return `  // ${text.length <= 100 ? text : `${text.slice(0, text.lastIndexOf(' ', 99))} …`}`;
  };
  const small = (value: unknown) => {
    const text = JSON.stringify(value);
    return text.length <= 60 ? text : undefined;
  };
  const write = (value: unknown, path: string, indent: string, prefix: string, last: boolean) => {
    const comma = last ? '' : ',';
    const inline = small(value);
    const isObject = value !== null && typeof value === 'object';
    if (inline !== undefined && (!isObject || path.split('.').length > 2 || Array.isArray(value))) {
      lines.push(`${indent}${prefix}${inline}${comma}${prefix ? comment(path) : ''}`);
      return;
    }
    const entries = Array.isArray(value)
      ? value.map((v) => [undefined, v] as const)
      : Object.entries(value as Record<string, unknown>);
    lines.push(`${indent}${prefix}${Array.isArray(value) ? '[' : '{'}${prefix ? comment(path) : ''}`);
    entries.forEach(([key, v], i) => {
      const child =
        key === undefined
          ? `${path}[]`
          : path === 'destinations'
            ? `destinations.<name>${typeof (v as { type?: unknown })?.type === 'string' ? `{${(v as { type: string }).type}}` : ''}`
            : `${path ? `${path}.` : ''}${key}`;
      write(
        v,
        child,
        `${indent}  `,
        key === undefined ? '' : `${JSON.stringify(key)}: `,
        i === entries.length - 1,
      );
    });
    lines.push(`${indent}${Array.isArray(value) ? ']' : '}'}${comma}`);
  };
  write(config, '', '', '', true);
  return lines.join('\n');
}
