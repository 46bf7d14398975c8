import { api, q } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { whenChanged } from '../changes.js';
import { time } from '../format.js';

/** The audit log (admins): every change, newest first, 50 rows a page, filtered by action and
 * actor (the URL keeps the filters and the page). Every field — actor names, addresses, the
 * state after a change — is client-supplied or may be, so it is shown as text, cut in the
 * table with the full value in its title. */
export async function render(main, params, { go }) {
  const action = params.get('action') ?? '';
  const actor = params.get('actor') ?? '';
  const before = params.get('before') ?? '';
  const holder = el('div');
  const actionInput = el('input', { id: 'audit-action', type: 'text', name: 'action', value: action, autocomplete: 'off', spellcheck: 'false', placeholder: 'config.update', maxlength: 255 });
  const actorInput = el('input', { id: 'audit-actor', type: 'text', name: 'actor', value: actor, autocomplete: 'off', spellcheck: 'false', placeholder: 'alice', maxlength: 255 });
  const form = el('form', { class: 'filters', 'aria-label': 'Filter the audit log' },
    el('label', { for: 'audit-action' }, 'Action ', actionInput), el('label', { for: 'audit-actor' }, 'Actor ', actorInput),
    el('button', { type: 'submit', class: 'primary' }, 'Filter'),
    action || actor ? el('button', { type: 'button', onclick: () => go('audit', {}) }, 'Clear filters') : null);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = {};
    if (actionInput.value.trim()) chosen.action = actionInput.value.trim();
    if (actorInput.value.trim()) chosen.actor = actorInput.value.trim();
    go('audit', chosen);
  });
  replace(main, el('h1', {}, 'Audit log'),
    el('p', { class: 'muted' }, 'Every change, who made it, from where, and what it changed — newest first. Actions are dotted names such as config.update, proposal.approve or token.add (docs/api.md lists them).'),
    form, holder);

  const filters = () => ({ ...(action ? { action } : {}), ...(actor ? { actor } : {}) });
  const draw = whenChanged((data) => {
    const rows = data.entries.map((e) => ({ data: e, cells: [
      time(e.at), clientText(e.actor || '—'), clientText(e.address), clientText(e.action, 'span', { 'data-role': 'action' }), e.app ? clientText(e.app) : '—',
      e.after === null ? '—' : clientText(JSON.stringify(e.after), 'code')] }));
    replace(holder,
      rows.length ? el('div', { class: 'scroll' }, table(['When', 'Actor', 'Address', 'Action', 'App', 'After'], rows))
        : el('p', { class: 'muted', 'data-role': 'no-audit' }, 'No rows match.'),
      el('p', { class: 'actions' },
        before ? el('button', { type: 'button', onclick: () => go('audit', filters()) }, 'Newest') : null, ' ',
        data.next_before ? el('button', { type: 'button', onclick: () => go('audit', { ...filters(), before: data.next_before }) }, 'Older') : null));
  });
  async function refresh() {
    const query = new URLSearchParams({ limit: '50', ...filters(), ...(before ? { before } : {}) });
    draw(await api.get(`/v1/admin/audit?${query}`));
  }
  await refresh();
  return { refresh };
}
