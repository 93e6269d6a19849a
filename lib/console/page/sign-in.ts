/**
 * The sign-in form: one API token, checked with `GET /whoami` before it is kept (in this tab's
 * sessionStorage only). A token the API refuses is never kept, and the form says why.
 */
import { ApiFailure, explain, identify, session } from './api.ts';
import { errorLine, field, fill, h, statusLine } from './dom.ts';
import type { WhoAmI } from './types.ts';

export function signIn(why: string | undefined, signedIn: (who: WhoAmI) => void): HTMLElement {
  const input = h('input', {
    type: 'password',
    name: 'token',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
  });
  const said = h('div', { class: 'said' }, why ? errorLine(why) : null);
  const form = h(
    'form',
    { class: 'sign-in', novalidate: true },
    field(
      'API token',
      input,
      'Your own API client’s token. It stays in this tab (sessionStorage) until you sign out or close it, and is sent only to this API.',
    ),
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
    said,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) {
      fill(said, errorLine('Enter an API token first.'));
      input.focus();
      return;
    }
    fill(said, statusLine('Checking the token…'));
    try {
      const who = await identify(token);
      session.keep(token);
      input.value = '';
      signedIn(who);
    } catch (error) {
      fill(
        said,
        errorLine(
          error instanceof ApiFailure && error.status === 401
            ? 'That token was not accepted: it is wrong, expired or was removed. Check it and enter it again.'
            : explain(error),
        ),
      );
      input.select();
      input.focus();
    }
  });
  return h(
    'section',
    { class: 'view view-sign-in', 'aria-labelledby': 'view-title' },
    h('h2', { id: 'view-title', tabindex: -1 }, 'Sign in'),
    h(
      'p',
      {},
      'The console reads and acts through the API with your token and its scopes: what it cannot do, it does not offer.',
    ),
    form,
  );
}
