import { api, q, APIError } from '../api.js';
import { el, replace, table } from '../dom.js';
import { time } from '../format.js';

const switches = [['enabled', 'Watchdog enabled (kill switch)'], ['auto_fix', 'Auto-fix misplaced views'], ['test_crash', 'Crash on purpose after a reported glitch']];

/** The config panel: switches with a confirmation saying who is affected, rules, history with diffs, rollback. Admin only for changes. */
export async function render(main, params, { session }) {
  const app = params.get('app');
  const admin = session?.role === 'admin';
  const base = `/v1/admin/apps/${q(app)}/config`;
  const message = el('p', { class: 'error' });
  const holder = el('div');
  const dialog = el('dialog');
  replace(main, el('h1', {}, 'Config'),
    admin ? null : el('p', { class: 'muted', 'data-role': 'read-only' }, 'Signed in as a viewer: you see the config; admins change it.'),
    message, holder, dialog);

  /** Dry-run first, then ask, then change with If-Match. */
  async function change(description, perform) {
    message.textContent = '';
    try {
      const preview = (await perform(true)).data;
      const impact = preview.impact ?? [];
      const switched = impact.reduce((sum, r) => sum + r.switched, 0);
      const confirmed = await confirmDialog(description, impact, switched, preview.impact_window_days);
      if (!confirmed) return await draw();  // puts a switch back the way it is
      await perform(false);
      await draw();
    } catch (error) {
      message.textContent = error instanceof APIError && error.status === 409 ? 'Someone changed the config meanwhile; reloaded — try again.' : error.message;
      await draw();
    }
  }

  function confirmDialog(description, impact, switched, days) {
    return new Promise((resolve) => {
      const finish = (answer) => { dialog.close(); resolve(answer); };
      replace(dialog,
        el('h2', {}, description),
        el('p', { 'data-role': 'impact' }, `This switches ${switched} of the installs seen in the last ${days ?? 7} days.`),
        impact.length ? table(['Release', { label: 'Recent installs', num: true }, { label: 'Switched', num: true }],
          impact.map((r) => ({ data: r, cells: [r.release, r.recent_installs, r.switched] }))) : el('p', { class: 'muted' }, 'No recent installs recorded.'),
        el('p', {}, el('button', { class: 'danger', onclick: () => finish(true) }, 'Apply'), ' ', el('button', { onclick: () => finish(false) }, 'Cancel')));
      dialog.showModal();
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
    replace(holder,
      el('div', { class: 'card' }, el('h2', {}, `Switches (version ${document.version})`),
        switches.map(([key, label]) => {
          const on = document.defaults[key] ?? (key === 'enabled');
          return el('p', {}, el('label', {},
            el('input', { type: 'checkbox', 'data-key': key, checked: on ? 'checked' : null, disabled: admin ? null : 'disabled',
              onchange: (e) => change(`${e.target.checked ? 'Turn on' : 'Turn off'} ${key} for everyone`,
                (dry) => api.patch(`${base}${dry ? '?dry_run=true' : ''}`, { [key]: e.target.checked }, etag)) }),
            ' ', label));
        })),
      el('div', { class: 'card' }, el('h2', {}, 'Rules'),
        rules.length ? table(['Id', 'Name', 'Versions', 'Channels', 'Idioms', { label: 'Percent', num: true }, 'Sets'],
          rules.map((r) => ({ data: r, cells: [r.id, r.name, r.match.versions ?? 'all', (r.match.channels ?? []).join(', ') || 'all',
            (r.match.idioms ?? []).join(', ') || 'all', r.match.percent, JSON.stringify(r.set)] }))) : el('p', { class: 'muted' }, 'No rules: everyone gets the defaults.')),
      el('div', { class: 'card' }, el('h2', {}, 'History'),
        table(['Version', 'When', 'Who', 'Change', ''], history.map((h) => ({ data: h, cells: [String(h.version), time(h.changed_at), h.changed_by, diff(h.before, h.after),
          h.version === document.version ? 'current' : !admin ? '' : el('button', { onclick: () => change(`Roll back to version ${h.version}`,
            (dry) => api.postWithETag(`${base}/rollback${dry ? '?dry_run=true' : ''}`, { version: h.version }, etag)) }, 'Roll back')] })))));
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
