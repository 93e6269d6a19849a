/**
 * Elements built from data as text only: the one way the console puts anything on the page.
 *
 * Upstream text (titles, logins, errors, display names) holds markup on purpose (`<script>`,
 * `<img onerror>`, `<!channel>`), so nothing here ever parses a string as HTML: children become
 * text nodes, attributes are set one by one, an `on…` attribute cannot be given as text, and a link
 * may only lead inside the page (`#/…`). The page's CSP (Trusted Types required, none allowed)
 * would refuse an `innerHTML` anyway; this keeps the code from needing one.
 *
 * @example
 * h('p', { class: 'note' }, 'Matched ', h('time', { datetime: at }, when(at)));
 */

export type Child = Node | string | number | null | undefined | false | Child[];
type Handler = (event: Event) => void;
export type Props = Record<string, string | number | boolean | undefined | null | Handler>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') {
      if (!name.startsWith('on')) throw new Error(`${name}: only on… props take a function`);
      el.addEventListener(name.slice(2), value);
    } else if (name.startsWith('on')) {
      throw new Error(`${name}: an event handler is a function, never text`);
    } else if (name === 'href' && !String(value).startsWith('#/')) {
      throw new Error('a link leads inside the console only');
    } else if (name === 'value' && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) {
      el.value = String(value);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Appends children as nodes; a string is always a text node. */
export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces what an element holds. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A timestamp as a reader wants it (UTC, to the minute), in a `<time>` that keeps the exact one. */
export function when(iso: string | null | undefined): Child {
  if (!iso) return 'never';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  const text = `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return h('time', { datetime: date.toISOString(), title: String(iso) }, text);
}

/** Seconds as words: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return 'unknown';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

/** Any JSON value as short text (an audit target or result may be a string or an object). */
export function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * A table that reads as a list of cards on a phone: each cell carries its column's name
 * (`data-label`, shown by the stylesheet), so nothing scrolls sideways at 390 px.
 */
export function table(caption: string, columns: string[], rows: Child[][], empty: string): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'table',
    { class: 'rows' },
    h('caption', {}, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((cells) =>
        h(
          'tr',
          {},
          cells.map((cell, i) =>
            h('td', { 'data-label': columns[i] ?? '' }, h('div', { class: 'cell' }, cell)),
          ),
        ),
      ),
    ),
  );
}

/** A view's heading, focusable so that moving to a view moves a screen reader there too. */
export function heading(title: string): HTMLHeadingElement {
  return h('h2', { tabindex: -1, id: 'view-title' }, title);
}

/** A line that says what is happening (loading, done) to everyone, a screen reader included. */
export function statusLine(...children: Child[]): HTMLParagraphElement {
  return h('p', { role: 'status', class: 'status' }, ...children);
}

/** A line that says what went wrong, announced at once. */
export function errorLine(...children: Child[]): HTMLParagraphElement {
  return h('p', { role: 'alert', class: 'error' }, ...children);
}

let ids = 0;
/** An id for a control and its label. */
export function uid(prefix: string): string {
  ids += 1;
  return `${prefix}-${ids}`;
}

/** A labelled control: the label names it for a screen reader, the hint describes it. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const id = control.id || uid('f');
  control.id = id;
  const hintId = hint ? `${id}-hint` : undefined;
  if (hintId) control.setAttribute('aria-describedby', hintId);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    control,
    hint ? h('small', { id: hintId }, hint) : null,
  );
}

/** A select of values, the first one chosen unless `selected` names another. */
export function select(
  name: string,
  options: [value: string, label: string][],
  selected = '',
): HTMLSelectElement {
  return h(
    'select',
    { name },
    options.map(([value, label]) => h('option', { value, selected: value === selected }, label)),
  );
}

/** A region that is loading: it says so in words, and is `aria-busy` until `settle` fills it. */
export function loading(words: string): HTMLDivElement {
  return h('div', { class: 'results', 'aria-busy': 'true' }, statusLine(words));
}

/** Fills a loading region with its content (or its error), and ends its `aria-busy`. */
export function settle(region: Element, ...children: Child[]): void {
  fill(region, ...children);
  region.removeAttribute('aria-busy');
}
