import { api, q, APIError } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { time, number } from '../format.js';
import { whenChanged } from '../changes.js';
import { renderAlerts } from './alerts.js';
import { renderAttestation } from './attestation.js';
import { renderProposals } from './proposals.js';
import { diff } from '../diff.js';

const switches = [['enabled', 'Watchdog enabled (kill switch)'], ['auto_fix', 'Auto-fix misplaced views'], ['test_crash', 'Crash on purpose after a reported glitch']];
/** Switching test_crash on for more installs than this needs the app's name typed. */
export const NAME_CHECK_ABOVE = 10;
const expiries = [['1', '1 hour'], ['24', '24 hours'], ['168', '7 days']];
const BUILT_IN_BUDGET = 1;
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
      const answer = await confirmDialog(description, preview, extra);
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

  /** Resolves to false (Cancel, Escape) or to what the dialog's fields add to the change. */
  function confirmDialog(description, preview, { testCrash, diffFrom, effect }) {
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
        // Which switch, which way, and how many installs of each release (issue 44).
        el('p', { 'data-role': 'impact' }, effect ? `${effect}: ` : '', `this switches ${number(switched)} of the installs seen in the last ${preview.impact_window_days ?? 7} days`,
          impact.length ? ', per release below.' : '.'),
        impact.length ? el('div', { class: 'scroll' }, table(['Release', { label: 'Recent installs', num: true }, { label: 'Switched', num: true }],
          impact.map((r) => ({ data: r, cells: [clientText(r.release), number(r.recent_installs), number(r.switched)] })))) : el('p', { class: 'muted' }, 'No recent installs recorded.'),
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

  let editing = null;  // the id of the rule in the form, or null for a new one
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
    if (force) drawPanel.forget();
    drawPanel(server, etag, history, [...opened.keys()]);
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
  const drawPanel = whenChanged((server, etag, { versions: history, more }) => {
    const rules = server.rules ?? [];
    const restore = (version, label, perform) => el('button', { type: 'button', 'data-version': version,
      onclick: () => change(`Restore version ${label}`, perform, `button[data-version="${version}"]`, { diffFrom: server, effect: `every switch and rule back to version ${label}` }) }, `Restore version ${label}`);
    const saveRules = (description, next, returnTo) => change(description,
      (dry) => api.patch(`${base}${dry ? '?dry_run=true' : ''}`, { rules: next }, etag), returnTo, { diffFrom: server });
    const label = (r) => r.name || r.id;
    function ruleActions(r, index) {
      const moved = (to) => { const next = [...rules]; next.splice(index, 1); next.splice(to, 0, r); return next; };
      return el('span', { class: 'actions' },
        el('button', { type: 'button', 'data-rule-edit': r.id, 'aria-label': `Edit rule ${label(r)}`, onclick: () => { editing = r.id; draw().then(() => holder.querySelector('#rule-name')?.focus()); } }, 'Edit'), ' ',
        index > 0 ? el('button', { type: 'button', 'data-rule-up': r.id, 'aria-label': `Move rule ${label(r)} up`, onclick: () => saveRules(`Move rule ${label(r)} up`, moved(index - 1), `[data-rule-up="${r.id}"]`) }, '↑') : null, ' ',
        index < rules.length - 1 ? el('button', { type: 'button', 'data-rule-down': r.id, 'aria-label': `Move rule ${label(r)} down`, onclick: () => saveRules(`Move rule ${label(r)} down`, moved(index + 1), `[data-rule-down="${r.id}"]`) }, '↓') : null, ' ',
        el('button', { type: 'button', 'aria-label': `Delete rule ${label(r)}`, onclick: () => saveRules(`Delete rule ${label(r)}`, rules.filter((x) => x !== r), '#rule-name') }, 'Delete'));
    }
    /** Create or edit a rule: what it matches and what it sets (test_crash only through the switch, with its checks). */
    function ruleForm(rule) {
      const field = (id, text, input) => el('label', { for: id }, text, ' ', input);
      const name = el('input', { id: 'rule-name', type: 'text', maxlength: 128, value: rule?.name ?? '' });
      const versions = el('input', { id: 'rule-versions', type: 'text', placeholder: '>=14.2.0 <15', value: rule?.match?.versions ?? '' });
      const channels = el('input', { id: 'rule-channels', type: 'text', placeholder: 'beta, internal', value: (rule?.match?.channels ?? []).join(', ') });
      const idioms = el('input', { id: 'rule-idioms', type: 'text', placeholder: 'phone, pad', value: (rule?.match?.idioms ?? []).join(', ') });
      const percent = el('input', { id: 'rule-percent', type: 'number', min: 0, max: 100, step: 'any', value: rule?.match?.percent ?? 100 });
      const setting = (key) => el('select', { id: `rule-set-${key}` }, [['', 'unchanged'], ['true', 'on'], ['false', 'off']].map(([value, text]) =>
        el('option', { value, selected: rule?.set?.[key] !== undefined && String(rule.set[key]) === value ? 'selected' : null }, text)));
      const sets = { auto_fix: setting('auto_fix'), enabled: setting('enabled') };
      const list = (text) => text.split(',').map((x) => x.trim()).filter(Boolean);
      const form = el('form', { class: 'inline rule-form', 'aria-labelledby': 'rule-form-title' },
        el('h3', { id: 'rule-form-title' }, rule ? `Edit rule ${label(rule)}` : 'New rule'),
        field('rule-name', 'Name', name), field('rule-versions', 'Versions', versions), field('rule-channels', 'Channels', channels),
        field('rule-idioms', 'Idioms', idioms), field('rule-percent', 'Percent', percent),
        field('rule-set-auto_fix', 'Sets auto_fix', sets.auto_fix), field('rule-set-enabled', 'Sets enabled', sets.enabled),
        el('button', { type: 'submit', class: 'primary' }, rule ? 'Review change' : 'Review new rule'),
        rule ? el('button', { type: 'button', onclick: () => { editing = null; draw(); } }, 'Stop editing') : null);
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        const set = Object.fromEntries(Object.entries(sets).filter(([, s]) => s.value).map(([k, s]) => [k, s.value === 'true']));
        if (!Object.keys(set).length) { message.textContent = 'A rule must set auto_fix or enabled.'; return; }
        const match = { percent: Number(percent.value) };
        if (versions.value.trim()) match.versions = versions.value.trim();
        if (list(channels.value).length) match.channels = list(channels.value);
        if (list(idioms.value).length) match.idioms = list(idioms.value);
        const made = { ...(rule?.id ? { id: rule.id } : {}), ...(name.value.trim() ? { name: name.value.trim() } : {}), match, set };
        const next = rule ? rules.map((r) => (r.id === rule.id ? made : r)) : [...rules, made];
        editing = null;
        saveRules(rule ? `Change rule ${label(rule)}` : `Add rule ${made.name ?? ''}`.trim(), next, '#rule-name');
      });
      return form;
    }
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
                  { testCrash: key === 'test_crash' && turnOn, effect: `${key} ${turnOn ? 'off → on' : 'on → off'} for every install` });
              } }),
            ' ', el('label', { for: id }, label),
            key === 'test_crash' && server.defaults.test_crash_expires_at ? el('small', { class: 'muted' }, ` (expires ${time(server.defaults.test_crash_expires_at)})`) : null);
        })),
      el('div', { class: 'card' }, el('h2', {}, 'Rules'),
        el('p', { class: 'muted' }, 'Rules apply in order, each over the defaults and the rules before it; an install matches a rule when its version, channel and idiom do and it falls in the rule’s percentage.'),
        rules.length ? el('div', { class: 'scroll' }, table(['Id', 'Name', 'Versions', 'Channels', 'Idioms', { label: 'Percent', num: true }, 'Sets', ...(admin ? ['Actions'] : [])],
          rules.map((r, index) => ({ data: r, cells: [r.id, clientText(r.name ?? ''), r.match?.versions ?? 'all', (r.match?.channels ?? []).join(', ') || 'all',
            (r.match?.idioms ?? []).join(', ') || 'all', r.match?.percent ?? 100, JSON.stringify(r.set),
            ...(admin ? [ruleActions(r, index)] : [])] })))) : el('p', { class: 'muted' }, 'No rules: everyone gets the defaults.'),
        admin ? ruleForm(editing === null ? null : rules.find((r) => r.id === editing) ?? null) : null),
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
