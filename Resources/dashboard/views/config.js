import { api, q, APIError } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { time } from '../format.js';
import { whenChanged } from '../changes.js';
import { renderAlerts } from './alerts.js';
import { renderAttestation } from './attestation.js';
import { renderProposals } from './proposals.js';
import { diff } from '../diff.js';
import { confirmChange, expiresIn } from './config-dialog.js';
import { ruleForm } from './rule-form.js';

const switches = [['enabled', 'Watchdog enabled (kill switch)'], ['auto_fix', 'Auto-fix misplaced views'], ['test_crash', 'Crash on purpose after a reported glitch']];
let dialogs = 0;

/** The config panel: switches with a confirmation saying who is affected, rules, history (a
 * page of versions at a time; a version's diff and document fetched when opened), restoring a version. Operators and admins change it (attestation: admins). The dialog is bound to the server's
 * state: Cancel, Escape or an error redraw the panel from what the server holds. */
export async function render(main, params, { session }) {
  const app = params.get('app');
  // Operators and admins change config, rules and alerts; attestation is for admins.
  const admin = session?.role === 'admin' || session?.role === 'operator';
  const attestationAdmin = session?.role === 'admin';
  const base = `/v1/admin/apps/${q(app)}/config`;
  const message = el('p', { class: 'error', role: 'status' });
  const holder = el('div');
  const titleID = `config-dialog-title-${++dialogs}`;
  const dialog = el('dialog', { 'aria-labelledby': titleID });
  const alertsHolder = el('div');
  const attestationHolder = el('div');
  const proposalsHolder = el('div');
  replace(main, el('h1', {}, 'Config'),
    admin ? null : el('p', { class: 'muted', 'data-role': 'read-only' }, 'Signed in as a viewer: you see the config; operators and admins change it.'),
    message, proposalsHolder, holder, alertsHolder, attestationHolder, dialog);

  /** Dry-run first, then ask, then change with If-Match; focus goes back to `returnTo` (a
   * selector: the invoking control is redrawn). */
  async function change(description, perform, returnTo, extra = {}) {
    message.textContent = '';
    try {
      const preview = (await perform(true, {})).data;
      const answer = await confirmChange(dialog, titleID, app, description, preview, { rollouts, ...extra });
      // Four eyes: the app may need a second person's approval, and the change is proposed.
      const done = answer ? (await perform(false, answer)).data : null;
      if (done?.applied === false) message.textContent = `Proposed, not applied: ${done.message}`;
    } catch (error) {
      message.textContent = error instanceof APIError && error.status === 409 ? 'Someone changed the config meanwhile; reloaded — try again.' : error.message;
    }
    await draw();  // the switches show the server's state again, whatever happened
    await proposals?.refresh();
    holder.querySelector(returnTo)?.focus();
  }

  let editing = null;  // the id of the rule in the form, or null for a new one
  let rollouts = [];  // the app's guarded rollouts: a change dialog says which it ends
  let pages = 1;  // history pages shown ("More" adds one)
  const opened = new Map();  // version → its change (documents before and after), fetched when opened
  /** The history's first `pages` pages (versions without their documents), and the next link. */
  async function historyPages() {
    let page = await api.get(`${base}/history`);
    const versions = [...page.history];
    for (let n = 1; n < pages && page.next; n++) {
      page = await api.get(page.next);
      versions.push(...page.history);
    }
    return { versions, more: Boolean(page.next) };
  }
  /** Draws the panel from the server's state; `force` also when nothing changed (after a
   * dialog, whose switch may show what the server does not have). */
  async function draw(force = true) {
    const { data: server, etag } = await api.getWithETag(base);
    const history = await historyPages();
    if (admin) rollouts = (await api.get(`/v1/admin/apps/${q(app)}/rollouts`).catch(() => ({ rollouts: [] }))).rollouts ?? [];
    if (force) drawPanel.forget();
    // The rules under a guarded rollout (not its looks, which change every pass: a redraw would
    // empty a form being filled in).
    const moving = rollouts.filter((r) => r.status === 'active' || r.status === 'paused').map((r) => ({ rule: r.rule, status: r.status, percent: r.percent }));
    drawPanel(server, etag, history, [...opened.keys()], moving);
  }
  /** Shows or hides one version's change, fetching its documents the first time. */
  async function toggle(version) {
    message.textContent = '';
    try {
      if (opened.has(version)) opened.delete(version);
      else opened.set(version, await api.get(`${base}/history/${version}`));
    } catch (error) {
      message.textContent = error.message;
    }
    await draw();
    holder.querySelector(`button[data-open-version="${version}"]`)?.focus();
  }
  const drawPanel = whenChanged((server, etag, { versions: history, more }, _opened, moving) => {
    const rules = server.rules ?? [];
    const restore = (version, label, perform) => el('button', { type: 'button', 'data-version': version,
      onclick: () => change(`Restore version ${label}`, perform, `button[data-version="${version}"]`, { diffFrom: server, effect: `every switch and rule back to version ${label}` }) }, `Restore version ${label}`);
    /** Saves `next` (rules); `made`, the rule from the form, gets the dialog's test_crash expiry. */
    const saveRules = (description, next, returnTo, made = null) => {
      const testCrash = made?.set?.test_crash === true;
      const keepExpiry = made?.set?.test_crash_expires_at ?? null;
      const answered = (answer) => next.map((r) => (r === made && answer.test_crash_expires_at ? { ...r, set: { ...r.set, test_crash_expires_at: answer.test_crash_expires_at } } : r));
      return change(description, (dry, answer) => api.patch(`${base}${dry ? '?dry_run=true' : ''}`,
        { rules: answered(dry && testCrash ? { test_crash_expires_at: keepExpiry ?? expiresIn(24) } : answer) }, etag), returnTo,
      { diffFrom: server, testCrash, keepExpiry, budget: testCrash ? made.set.test_crash_budget ?? server.defaults.test_crash_budget : undefined });
    };
    const label = (r) => r.name || r.id;
    function ruleActions(r, index) {
      const moved = (to) => { const next = [...rules]; next.splice(index, 1); next.splice(to, 0, r); return next; };
      return el('span', { class: 'actions' },
        el('button', { type: 'button', 'data-rule-edit': r.id, 'aria-label': `Edit rule ${label(r)}`, onclick: () => { editing = r.id; draw().then(() => holder.querySelector('#rule-name')?.focus()); } }, 'Edit'), ' ',
        index > 0 ? el('button', { type: 'button', 'data-rule-up': r.id, 'aria-label': `Move rule ${label(r)} up`, onclick: () => saveRules(`Move rule ${label(r)} up`, moved(index - 1), `[data-rule-up="${r.id}"]`) }, '↑') : null, ' ',
        index < rules.length - 1 ? el('button', { type: 'button', 'data-rule-down': r.id, 'aria-label': `Move rule ${label(r)} down`, onclick: () => saveRules(`Move rule ${label(r)} down`, moved(index + 1), `[data-rule-down="${r.id}"]`) }, '↓') : null, ' ',
        el('button', { type: 'button', 'aria-label': `Delete rule ${label(r)}`, onclick: () => saveRules(`Delete rule ${label(r)}`, rules.filter((x) => x !== r), '#rule-name') }, 'Delete'));
    }
    /** Create or edit a rule (views/rule-form.js): what it matches and every key it may set. */
    const form = (rule) => ruleForm(rule, { label,
      stop: () => { editing = null; draw(); },
      refuse: (text) => { message.textContent = text; },
      submit: (made) => {
        const next = rule ? rules.map((r) => (r.id === rule.id ? made : r)) : [...rules, made];
        editing = null;
        saveRules(rule ? `Change rule ${label(rule)}` : `Add rule ${made.name ?? ''}`.trim(), next, '#rule-name', made);
      } });
    const rows = history.map((h) => {
      const change = opened.get(h.version);
      const show = el('button', { type: 'button', 'data-open-version': h.version, 'aria-expanded': change ? 'true' : 'false',
        onclick: () => toggle(h.version) }, change ? `Hide version ${h.version}` : `Show version ${h.version}`);
      return { data: h, cells: [String(h.version), time(h.changed_at), clientText(h.changed_by),
        el('div', { 'data-role': 'change', 'data-version': h.version }, show, change ? [diff(change.before, change.after),
          el('details', {}, el('summary', {}, 'Document'), el('pre', { class: 'document' }, JSON.stringify(change.after, null, 2)))] : null),
        h.version === server.version ? 'current' : !admin ? '' : restore(h.version, String(h.version),
          (dry) => api.postWithETag(`${base}/rollback${dry ? '?dry_run=true' : ''}`, { version: h.version }, etag))] };
    });
    if (more) {
      rows.push({ data: null, cells: ['', '', '', el('button', { type: 'button', 'data-role': 'more-history',
        onclick: () => { pages += 1; draw().then(() => holder.querySelector('[data-role="more-history"]')?.focus()); } }, 'More versions'), ''] });
    }
    if (history.length) {
      rows.push({ data: null, cells: ['0', '—', 'built in', 'the built-in defaults, no rules', !admin ? '' : restore(0, '0 (built-in)',
        (dry) => api.put(`${base}${dry ? '?dry_run=true' : ''}`, { version: 0, defaults: {}, rules: [], updated_at: null, updated_by: null }, etag))] });
    }
    replace(holder,
      el('div', { class: 'card' }, el('h2', {}, `Switches (version ${server.version})`),
        switches.map(([key, label]) => {
          const on = server.defaults[key] ?? (key === 'enabled');
          const id = `switch-${key}`;
          return el('p', {},
            el('input', { type: 'checkbox', id, 'data-key': key, checked: on ? 'checked' : null, disabled: admin ? null : 'disabled',
              onchange: (e) => {
                const turnOn = e.target.checked;
                const body = { [key]: turnOn };
                change(`${turnOn ? 'Turn on' : 'Turn off'} ${key} for everyone`,
                  (dry, extra) => api.patch(`${base}${dry ? '?dry_run=true' : ''}`, { ...body, ...extra }, etag), `input[data-key="${key}"]`,
                  { testCrash: key === 'test_crash' && turnOn, before: server, effect: `${key} ${turnOn ? 'off → on' : 'on → off'} for every install` });
              } }),
            ' ', el('label', { for: id }, label),
            key === 'test_crash' && server.defaults.test_crash_expires_at ? el('small', { class: 'muted' }, ` (expires ${time(server.defaults.test_crash_expires_at)})`) : null);
        })),
      el('div', { class: 'card' }, el('h2', {}, 'Rules'),
        el('p', { class: 'muted' }, 'Rules apply in order, each over the defaults and the rules before it; an install matches a rule when its version, channel and idiom do and it falls in the rule’s percentage.'),
        rules.length ? el('div', { class: 'scroll' }, table(['Id', 'Name', 'Versions', 'Channels', 'Idioms', { label: 'Percent', num: true }, 'Sets', ...(admin ? ['Actions'] : [])],
          rules.map((r, index) => ({ data: r, cells: [r.id, clientText(r.name ?? ''), r.match?.versions ?? 'all', (r.match?.channels ?? []).join(', ') || 'all',
            (r.match?.idioms ?? []).join(', ') || 'all', r.match?.percent ?? 100,
            [JSON.stringify(r.set), moving.filter((m) => m.rule === r.id).map((m) => el('small', { 'data-role': 'rule-rollout' }, ' (',
              el('a', { href: `#/cohort?app=${q(app)}&rule=${q(r.id)}` }, `guarded rollout ${m.status} at ${m.percent} %`), ')'))],
            ...(admin ? [ruleActions(r, index)] : [])] })))) : el('p', { class: 'muted' }, 'No rules: everyone gets the defaults.'),
        admin ? form(editing === null ? null : rules.find((r) => r.id === editing) ?? null) : null),
      el('div', { class: 'card' }, el('h2', {}, 'History'),
        el('p', { class: 'muted' }, 'Restoring a version makes its content current again, as a new version; the dialog shows what it changes first.'),
        rows.length ? el('div', { class: 'scroll' }, table(['Version', 'When', 'Who', 'Change', { label: 'Action' }], rows))
          : el('p', { class: 'muted', 'data-role': 'no-history' }, 'No changes yet: the built-in defaults apply.')));
  });

  let proposals = null;
  await draw();
  proposals = await renderProposals(proposalsHolder, app, { session, current: async () => (await api.getWithETag(base)).data });
  const alerts = await renderAlerts(alertsHolder, app, { admin });
  const attestation = await renderAttestation(attestationHolder, app, { admin: attestationAdmin });
  return { refresh: async () => { if (!dialog.open) { await draw(false); await alerts.refresh(); await attestation.refresh(); await proposals.refresh(); } } };
}
