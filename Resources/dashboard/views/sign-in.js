import { api } from '../api.js';
import { el, replace } from '../dom.js';

/** The dashboard's sign-in view: a viewer or admin token, answered with an HttpOnly session
 * cookie, and, when the server has an OpenID provider, a button that goes to it
 * (/auth/oidc/start). (A one-time link's page is the server's, with its own script: sign-in-link.js.) */
export function render(main, onSignedIn) {
  const input = el('input', { type: 'password', autocomplete: 'off', size: 40, 'aria-label': 'Token', class: 'token', placeholder: 'wdv_… or wda_…' });
  const message = el('p', { class: 'error' });
  const form = el('form', { class: 'card' },
    el('h1', {}, 'Sign in'),
    el('p', { class: 'muted' }, 'Paste a viewer or admin token (watchdogd tokens add --role viewer NAME), or open the sign-in link `serve --demo` printed.'),
    el('div', { class: 'inline' }, input, ' ', el('button', { class: 'primary', type: 'submit' }, 'Sign in')),
    message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api.login(input.value.trim());
      onSignedIn();
    } catch (error) {
      // Words for people, not the API's advice about headers.
      message.textContent = error.status === 401 || error.status === 403
        ? 'This token is not valid here: it may be mistyped, revoked, or an app’s ingest key. Use a viewer or admin token.'
        : `Sign-in failed: ${error.message}`;
    }
  });
  replace(main, form);
  // The provider's button, when one is set up (`serve --oidc-issuer`): to the server's
  // /auth/oidc/start, which sends the browser on to the provider.
  api.get('/v1/auth/oidc').then((oidc) => {
    if (!oidc?.enabled) return;
    const button = el('button', { type: 'button', class: 'primary', onclick: () => window.location.assign('/auth/oidc/start') }, `Sign in with ${oidc.name}`);
    form.insertBefore(el('p', {}, button), form.children[1]);
  }).catch(() => {});
}
