import { api, q } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { number, time } from '../format.js';
import { whenChanged } from '../changes.js';
import { refocus } from '../confirm.js';

const PAGE = 20;
let dialogs = 0;

/** The line under the releases table: how many releases are stored but held apart. */
export function unlistedLine(unlisted) {
  if (!unlisted?.count) return null;
  const held = unlisted.implausible_sessions ? ` (and ${number(unlisted.implausible_sessions)} implausible, not counted)` : '';
  return el('p', { class: 'warning', 'data-role': 'unlisted-summary' },
    `${number(unlisted.count)} unlisted release${unlisted.count === 1 ? '' : 's'} held apart — sessions ${number(unlisted.sessions)}${held}, reports ${number(unlisted.reports)}. `,
    'They are stored but left out of this table, the pickers, verdicts and alerts until declared or admitted.');
}

/** Admin actions on releases: a confirmed Admit, and a Delete that asks for the release's text
 * typed. Each dialog starts on Cancel; Escape cancels. `done` redraws from the server. */
export function releaseActions(app, host, done) {
  const titleID = `release-dialog-title-${++dialogs}`;
  const dialog = el('dialog', { 'aria-labelledby': titleID });
  const message = el('p', { role: 'status', 'data-role': 'release-message' });
  host.append(message, dialog);

  function ask(title, body, actionLabel, typedText) {
    return new Promise((resolve) => {
      let finished = false;
      const finish = (value) => {
        if (finished) return;
        finished = true;
        if (dialog.open) dialog.close();
        resolve(value);
      };
      const confirm = el('button', { type: 'button', class: 'danger', 'data-role': 'confirm', onclick: () => finish(true) }, actionLabel);
      const cancel = el('button', { type: 'button', onclick: () => finish(false) }, 'Cancel');
      const typed = el('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', id: `${titleID}-typed`, 'data-role': 'typed' });
      if (typedText !== undefined) {
        confirm.disabled = true;
        typed.addEventListener('input', () => { confirm.disabled = typed.value !== typedText; });
      }
      replace(dialog, el('h2', { id: titleID }, title), body,
        typedText !== undefined ? el('p', {}, el('label', { for: typed.id }, 'Type the release (', clientText(typedText), ') to delete it '), typed) : null,
        el('p', { class: 'actions' }, cancel, ' ', confirm));
      dialog.oncancel = (event) => { event.preventDefault(); finish(false); };
      dialog.onclose = () => finish(false);
      dialog.showModal();
      cancel.focus();  // a stray Space or Enter must not admit or delete
    });
  }

  /** Runs an action, redraws, and gives focus back: to the control that asked when it is still
   * there (cancelled), else to the status line saying what happened (the row is gone). */
  async function run(perform, returnTo) {
    message.textContent = '';
    message.className = '';
    try {
      const said = await perform();
      if (said) message.textContent = said;
    } catch (error) {
      message.className = 'error';
      message.textContent = error.message;
    }
    await done();
    refocus(returnTo, message.textContent ? message : null);
  }

  const base = `/v1/admin/apps/${q(app)}/releases`;
  return {
    admit: (r) => run(async () => {
      // What the release holds (issue 44): admitting one without counted sessions lists a release
      // every verdict reads as n/a until session starts arrive.
      const sessions = r.sessions ?? 0, reports = r.reports + (r.suspect_reports ?? 0) + (r.flooded_reports ?? 0);
      const body = [
        el('p', {}, clientText(r.release), ' will be listed: it shows in the releases table and the pickers, and verdicts and alerts take it into account.'),
        el('p', { 'data-role': 'holds' }, `It holds ${number(sessions)} counted session start${sessions === 1 ? '' : 's'}`,
          r.implausible_sessions ? ` (and ${number(r.implausible_sessions)} held apart as implausible)` : '', ` and ${number(reports)} report${reports === 1 ? '' : 's'}`,
          sessions ? '.' : ': with no counted session, its rates and verdicts read n/a until starts arrive, and the views keep opening on the newest release with sessions.'),
      ];
      if (!(await ask(`Admit ${r.release}?`, body, 'Admit'))) return null;
      await api.post(`${base}/${q(r.id)}/admit`);
      return `${r.release}: admitted.`;
    }, `[data-admit="${CSS.escape(String(r.id))}"]`),
    delete: (r) => run(async () => {
      const body = el('p', { 'data-role': 'what' }, 'This deletes ', clientText(r.release), ` for good, with its ${number(r.sessions + (r.implausible_sessions ?? 0))} session starts and `,
        `${number(r.all_reports ?? r.reports)} reports.`);
      if (!(await ask(`Delete ${r.release}?`, body, 'Delete', r.release))) return null;
      const answer = await api.delete(`${base}/${q(r.id)}?confirm=${q(r.release)}`);
      // Four eyes: proposed, not deleted, when the app needs a second person's approval.
      if (answer?.applied === false) throw new Error(`Proposed, not applied: ${answer.message}`);
      return `${r.release}: deleted.`;
    }, `[data-delete="${CSS.escape(String(r.id))}"]`),
  };
}

/** Admins' card under the releases table: the unlisted releases, a page at a time, with
 * Admit and Delete. */
export async function renderUnlisted(holder, app, actions) {
  let offset = 0;
  const card = el('div', { class: 'card', 'data-role': 'unlisted' });
  holder.append(card);
  const draw = whenChanged((data) => {
    const unlisted = data.unlisted;
    const rows = unlisted.releases.map((r) => ({ data: r, cells: [clientText(r.release), number(r.sessions), number(r.implausible_sessions),
      number(r.reports + r.suspect_reports + r.flooded_reports), time(r.last_seen),
      el('span', { class: 'actions' },
        el('button', { type: 'button', 'data-admit': r.id, 'aria-label': `Admit ${r.release}`, onclick: () => actions.admit(r) }, 'Admit'), ' ',
        el('button', { type: 'button', 'data-delete': r.id, 'aria-label': `Delete ${r.release}`,
          onclick: () => actions.delete({ ...r, all_reports: r.reports + r.suspect_reports + r.flooded_reports }) }, 'Delete'))] }));
    const last = Math.min(offset + unlisted.releases.length, unlisted.count);
    replace(card, el('h2', {}, 'Unlisted releases'),
      el('p', { class: 'muted' }, 'Releases whose data arrived without a declaration and without enough installs on enough networks (or any, under strict admission). ',
        'Admit one to list it, or delete it with its data. Declare releases from CI: POST /v1/admin/apps/{app}/releases.'),
      unlisted.count ? [
        el('div', { class: 'scroll' }, table(['Release', { label: 'Sessions', num: true }, { label: 'Implausible', num: true }, { label: 'Reports', num: true }, 'Last seen', { label: 'Actions', end: true }], rows)),
        el('p', { 'data-role': 'unlisted-page' }, `${number(offset + 1)}–${number(last)} of ${number(unlisted.count)} `,
          el('button', { type: 'button', disabled: offset === 0 ? 'disabled' : null, onclick: () => { offset = Math.max(0, offset - PAGE); refresh(); } }, 'Previous'), ' ',
          el('button', { type: 'button', disabled: last >= unlisted.count ? 'disabled' : null, onclick: () => { offset += PAGE; refresh(); } }, 'Next')),
      ] : el('p', { class: 'muted', 'data-role': 'no-unlisted' }, 'No unlisted releases.'));
  });
  async function refresh() {
    const data = await api.get(`/v1/admin/apps/${q(app)}/releases?offset=${offset}&limit=${PAGE}`);
    if (offset > 0 && offset >= data.unlisted.count) { offset = Math.max(0, data.unlisted.count - PAGE); return refresh(); }
    draw(data);
  }
  await refresh();
  return { refresh };
}
