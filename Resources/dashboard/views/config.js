import { api, q, APIError } from '../api.js';
import { el, replace, table } from '../dom.js';
import { time, number } from '../format.js';

const switches = [['enabled', 'Watchdog enabled (kill switch)'], ['auto_fix', 'Auto-fix misplaced views'], ['test_crash', 'Crash on purpose after a reported glitch']];
/** Switching test_crash on for more installs than this needs the app's name typed. */
export const NAME_CHECK_ABOVE = 10;
const expiries = [['1', '1 hour'], ['24', '24 hours'], ['168', '7 days']];
const BUILT_IN_BUDGET = 1;
let dialogs = 0;

/** The config panel: switches with a confirmation saying who is affected, rules, history with
 * diffs, restoring a version. Admin only for changes. The dialog is bound to the server's
 * state: Cancel, Escape or an error redraw the panel from what the server holds. */
export async function render(main, params, { session }) {
  const app = params.get('app');
  const admin = session?.role === 'admin';
  const base = `/v1/admin/apps/${q(app)}/config`;
  const message = el('p', { class: 'error', role: 'status' });
  const holder = el('div');
  const titleID = `config-dialog-title-${++dialogs}`;
  const dialog = el('dialog', { 'aria-labelledby': titleID });
  replace(main, el('h1', {}, 'Config'),
    admin ? null : el('p', { class: 'muted', 'data-role': 'read-only' }, 'Signed in as a viewer: you see the config; admins change it.'),
    message, holder, dialog);

  /** Dry-run first, then ask, then change with If-Match; focus goes back to `returnTo` (a
   * selector: the invoking control is redrawn). */
  async function change(description, perform, returnTo, extra = {}) {
    message.textContent = '';
    try {
      const preview = (await perform(true, {})).data;
      const answer = await confirmDialog(description, preview, extra);
      if (answer) await perform(false, answer);
    } catch (error) {
      message.textContent = error instanceof APIError && error.status === 409 ? 'Someone changed the config meanwhile; reloaded — try again.' : error.message;
    }
    await draw();  // the switches show the server's state again, whatever happened
    holder.querySelector(returnTo)?.focus();
  }

  /** Resolves to false (Cancel, Escape) or to what the dialog's fields add to the change. */
  function confirmDialog(description, preview, { testCrash, diffFrom }) {
    return new Promise((resolve) => {
      const impact = preview.impact ?? [];
      const switched = impact.reduce((sum, r) => sum + r.switched, 0);
      let done = false;
      const answer = () => (testCrash ? { test_crash_expires_at: new Date(Date.now() + Number(expiry.value) * 3_600_000).toISOString() } : {});
      const finish = (value) => {
        if (done) return;
        done = true;
        if (dialog.open) dialog.close();
        resolve(value);
      };
      const apply = el('button', { type: 'button', class: 'danger', onclick: () => finish(answer()) }, 'Apply');
      const cancel = el('button', { type: 'button', onclick: () => finish(false) }, 'Cancel');
      const expiry = el('select', { id: `${titleID}-expiry` }, expiries.map(([hours, label]) => el('option', { value: hours, selected: hours === '24' ? 'selected' : null }, label)));
      const typed = el('input', { type: 'text', autocomplete: 'off', id: `${titleID}-name`, spellcheck: 'false' });
      const needsName = testCrash && switched > NAME_CHECK_ABOVE;
      if (needsName) {
        apply.disabled = true;
        typed.addEventListener('input', () => { apply.disabled = typed.value !== app; });
      }
      const budget = preview.document?.defaults?.test_crash_budget ?? BUILT_IN_BUDGET;
      replace(dialog,
        el('h2', { id: titleID }, description),
        el('p', { 'data-role': 'impact' }, `This switches ${number(switched)} of the installs seen in the last ${preview.impact_window_days ?? 7} days.`),
        impact.length ? el('div', { class: 'scroll' }, table(['Release', { label: 'Recent installs', num: true }, { label: 'Switched', num: true }],
          impact.map((r) => ({ data: r, cells: [r.release, number(r.recent_installs), number(r.switched)] })))) : el('p', { class: 'muted' }, 'No recent installs recorded.'),
        testCrash ? [
          el('p', { 'data-role': 'budget' }, `Each install crashes at most ${budget} test crash${budget === 1 ? '' : 'es'} a day (UTC), then stops (test_crash_budget).`),
          el('p', { 'data-role': 'expiry' }, el('label', { for: expiry.id }, 'Expires after '), expiry, ' — test_crash turns itself off then.'),
          needsName ? el('p', {}, el('label', { for: typed.id }, `Type the app's name (${app}) to apply `), typed) : null,
        ] : null,
        diffFrom ? el('div', { 'data-role': 'diff' }, el('h3', {}, 'What this changes'), diff(diffFrom, preview.document)) : null,
        el('p', { class: 'actions' }, cancel, ' ', apply));
      dialog.oncancel = (event) => { event.preventDefault(); finish(false); };  // Escape = Cancel
      dialog.onclose = () => finish(false);
      dialog.showModal();
      cancel.focus();  // a stray Space or Enter must not apply
    });
  }

  let last = null;
  async function draw(force = true) {
    const { data: document, etag } = await api.getWithETag(base);
    const history = (await api.get(`${base}/history`)).history;
    const key = JSON.stringify([document, history]);
    if (!force && key === last) return;
    last = key;
    const rules = document.rules ?? [];
    const restore = (version, label, perform) => el('button', { type: 'button', 'data-version': version,
      onclick: () => change(`Restore version ${label}`, perform, `button[data-version="${version}"]`, { diffFrom: document }) }, `Restore version ${label}`);
    const oldest = history[history.length - 1];
    const rows = history.map((h) => ({ data: h, cells: [String(h.version), time(h.changed_at), h.changed_by, diff(h.before, h.after),
      h.version === document.version ? 'current' : !admin ? '' : restore(h.version, String(h.version),
        (dry) => api.postWithETag(`${base}/rollback${dry ? '?dry_run=true' : ''}`, { version: h.version }, etag))] }));
    if (oldest) {
      rows.push({ data: null, cells: ['0', '—', 'built in', 'the built-in defaults, no rules', !admin ? '' : restore(0, '0 (built-in)',
        (dry) => api.put(`${base}${dry ? '?dry_run=true' : ''}`, { version: 0, defaults: {}, rules: [], updated_at: null, updated_by: null }, etag))] });
    }
    replace(holder,
      el('div', { class: 'card' }, el('h2', {}, `Switches (version ${document.version})`),
        switches.map(([key, label]) => {
          const on = document.defaults[key] ?? (key === 'enabled');
          const id = `switch-${key}`;
          return el('p', {},
            el('input', { type: 'checkbox', id, 'data-key': key, checked: on ? 'checked' : null, disabled: admin ? null : 'disabled',
              onchange: (e) => {
                const turnOn = e.target.checked;
                const body = { [key]: turnOn };
                change(`${turnOn ? 'Turn on' : 'Turn off'} ${key} for everyone`,
                  (dry, extra) => api.patch(`${base}${dry ? '?dry_run=true' : ''}`, { ...body, ...extra }, etag), `input[data-key="${key}"]`,
                  { testCrash: key === 'test_crash' && turnOn });
              } }),
            ' ', el('label', { for: id }, label),
            key === 'test_crash' && document.defaults.test_crash_expires_at ? el('small', { class: 'muted' }, ` (expires ${time(document.defaults.test_crash_expires_at)})`) : null);
        })),
      el('div', { class: 'card' }, el('h2', {}, 'Rules'),
        rules.length ? el('div', { class: 'scroll' }, table(['Id', 'Name', 'Versions', 'Channels', 'Idioms', { label: 'Percent', num: true }, 'Sets'],
          rules.map((r) => ({ data: r, cells: [r.id, r.name, r.match.versions ?? 'all', (r.match.channels ?? []).join(', ') || 'all',
            (r.match.idioms ?? []).join(', ') || 'all', r.match.percent, JSON.stringify(r.set)] })))) : el('p', { class: 'muted' }, 'No rules: everyone gets the defaults.')),
      el('div', { class: 'card' }, el('h2', {}, 'History'),
        el('p', { class: 'muted' }, 'Restoring a version makes its content current again, as a new version; the dialog shows what it changes first.'),
        el('div', { class: 'scroll' }, table(['Version', 'When', 'Who', 'Change', { label: 'Action' }], rows))));
  }

  await draw();
  return { refresh: async () => { if (!dialog.open) await draw(false); } };
}

/** Key-level differences between two documents, as text lines. */
function diff(before, after) {
  const flat = (doc) => Object.fromEntries([...Object.entries(doc?.defaults ?? {}).map(([k, v]) => [`defaults.${k}`, JSON.stringify(v)]),
    ...(doc?.rules ?? []).map((r) => [`rule ${r.id}`, JSON.stringify({ match: r.match, set: r.set })])]);
  const a = flat(before), b = flat(after);
  const lines = [];
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (a[key] === b[key]) continue;
    if (a[key] !== undefined) lines.push(el('div', { class: 'diff-del' }, `− ${key}: ${a[key]}`));
    if (b[key] !== undefined) lines.push(el('div', { class: 'diff-add' }, `+ ${key}: ${b[key]}`));
  }
  return lines.length ? el('div', {}, lines) : 'no change';
}
