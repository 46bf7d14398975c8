import { api, q } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { whenChanged } from '../changes.js';
import { number, percent, time, kindName } from '../format.js';
import { loadReleases, releaseParam, releaseSelect, releaseLabel, navigatingSelect, option, newestCounted } from '../pickers.js';
import { confirmAction, refocus } from '../confirm.js';

const STATES = [['', 'Any state'], ['open', 'Open'], ['resolved', 'Resolved'], ['regressed', 'Regressed'], ['muted', 'Muted']];
const MUTE_DAYS = 7;

/** Top issues of a release, with new / regressed badges and the previous release's rate to
 * check them against; each leads to its reports. Issues carry their triage state (open,
 * resolved, regressed, muted), the list filters by it, and operators and admins resolve, mute
 * or reopen an issue with a note — each change confirmed first (`confirmAction`). */
export async function render(main, params, { link, go, settle, session }) {
  const app = params.get('app');
  const triager = session?.role === 'admin' || session?.role === 'operator';
  const releases = await loadReleases(app);
  const release = releaseParam(releases, params.get('release') ?? newestCounted(releases) ?? '');
  const state = STATES.some(([value]) => value === params.get('state')) ? params.get('state') ?? '' : '';
  const holder = el('div');
  const message = el('p', { role: 'status', 'data-role': 'triage-message' });
  const note = el('input', { type: 'text', id: 'triage-note', maxlength: '1000', 'data-role': 'triage-note' });
  const stateSelect = navigatingSelect({ name: 'state', 'aria-label': 'state', 'data-role': 'state-filter' },
    STATES.map(([value, label]) => option(value, label, value === state)), (chosen) => go('issues', { release, ...(chosen ? { state: chosen } : {}) }));
  replace(main, el('h1', {}, 'Top issues', release ? [' of ', clientText(releaseLabel(releases, release), 'span', { 'data-role': 'release' })] : null),
    el('form', { class: 'inline' }, el('label', {}, 'Release ', releaseSelect('release', releases, release, (chosen) => go('issues', { release: chosen, ...(state ? { state } : {}) }))),
      ' ', el('label', {}, 'State ', stateSelect)),
    triager ? el('p', {}, el('label', { for: 'triage-note' }, 'Note for your next resolve, mute or reopen '), note) : null,
    message, holder);
  settle({ release, ...(state ? { state } : {}) });

  const stateBadge = (i) => el('span', { class: `badge state ${i.state}`, 'data-role': 'state', title: triageText(i.triage) }, i.state);
  async function act(event, issue, action) {
    const button = event.currentTarget;
    const what = clientText(issue.title ?? kindName(issue.kind)).textContent;
    const plan = {
      resolve: { title: `Resolve “${what}”?`, confirm: 'Resolve', body: {},
        consequence: 'Resolved in the newest listed release it was seen in. Seen again in a later listed release, it becomes regressed and issue_regressed alerts fire.' },
      mute: { title: `Mute “${what}” for ${MUTE_DAYS} days?`, confirm: 'Mute', body: { hours: MUTE_DAYS * 24 },
        consequence: `No alert fires for it for ${MUTE_DAYS} days; its state reads muted meanwhile.` },
      reopen: { title: `Reopen “${what}”?`, confirm: 'Reopen', body: {},
        consequence: 'Open again: its resolution and any mute are cleared.' },
    }[action];
    if (!await confirmAction({ title: plan.title, consequence: plan.consequence, confirm: plan.confirm, role: 'triage-confirm', returnTo: button })) return;
    message.textContent = '';
    try {
      const body = { ...plan.body, ...(note.value ? { note: note.value } : {}) };
      const result = await api.post(`/v1/apps/${q(app)}/issues/${q(issue.fingerprint)}/${action}`, body);
      note.value = '';
      message.textContent = `${what}: ${result.state}.`;
      await refresh();
    } catch (error) {
      message.textContent = `Not changed: ${error.message}`;
    }
    // The row's buttons were redrawn (Resolve became Reopen): the status line says what happened.
    refocus(message);
  }
  const actions = (i) => el('span', { class: 'actions' },
    i.state === 'open' || i.state === 'regressed' ? el('button', { type: 'button', 'data-action': 'resolve', 'aria-label': `Resolve ${i.title}`, onclick: (e) => act(e, i, 'resolve') }, 'Resolve') : null, ' ',
    i.state !== 'muted' ? el('button', { type: 'button', 'data-action': 'mute', 'aria-label': `Mute ${i.title}`, onclick: (e) => act(e, i, 'mute') }, 'Mute') : null, ' ',
    i.state !== 'open' ? el('button', { type: 'button', 'data-action': 'reopen', 'aria-label': `Reopen ${i.title}`, onclick: (e) => act(e, i, 'reopen') }, 'Reopen') : null);

  const draw = whenChanged((data) => {
    const previous = (p) => !p ? '—' : el('span', { title: `${p.release}: ${number(p.affected_sessions)} of ${number(p.sessions)} sessions, ${number(p.reports_per_1k_sessions, 1)} reports / 1k` },
      percent(p.affected_session_rate), el('small', { class: 'muted' }, ' in ', clientText(p.release)));
    replace(holder,
      data.issues.length ? el('div', { class: 'scroll' }, table(
        ['Issue', 'State', { label: 'Sessions with it', num: true }, { label: 'Rate', num: true }, { label: 'Previous release', num: true },
          { label: 'Reports', num: true }, { label: '/1k sessions', num: true }, { label: 'Flooded', num: true }, 'First release', 'Last seen', ...(triager ? [{ label: 'Triage', end: true }] : [])],
        data.issues.map((i) => ({ data: i, cells: [
          el('span', {}, clientText(i.title ?? kindName(i.kind), 'a', { href: link('reports', { fingerprint: i.fingerprint, release }) }),
            i.new ? el('span', { class: 'badge new' }, 'new') : null, i.regressed ? el('span', { class: 'badge regressed' }, 'regressed') : null),
          stateBadge(i),
          number(i.affected_sessions), percent(i.affected_session_rate), previous(i.previous),
          number(i.reports), number(i.reports_per_1k_sessions, 1), number(i.flooded_reports), clientText(i.first_release), time(i.last_seen),
          ...(triager ? [actions(i)] : [])] })))) :
        el('p', { class: 'muted' }, state ? `No ${state} issues in this release.` : 'No issues in this release.'),
      el('p', {}, el('a', { href: `/v1/apps/${q(app)}/issues.csv?release=${q(release)}&limit=1000${state ? `&state=${q(state)}` : ''}`, download: '', 'data-role': 'csv' }, 'Download CSV'),
        el('small', { class: 'muted' }, ' (this release’s issues, up to 1,000)')),
      el('p', { class: 'muted' }, 'Rate: share of the release’s sessions with this issue. New: first seen in this release. Regressed: its rate rose significantly ',
        'against the previous release (the always-valid 95 % interval of the ratio above 1, as Compare reads it; at least 5 sessions). Flooded: reports past the per-session cap, kept out of the rates. ',
        'State: what a person said — resolved, regressed (resolved, and seen again in a later listed release), muted (no alert until the mute ends), or open.'));
  });
  async function refresh() {
    if (!release) return replace(holder, 'No releases yet.');
    draw(await api.get(`/v1/apps/${q(app)}/issues?release=${q(release)}&limit=50${state ? `&state=${q(state)}` : ''}`));
  }
  await refresh();
  return { refresh: async () => { if (!document.querySelector('dialog[open]')) await refresh(); } };
}

/** A triage's who, when and note in words (a tooltip). */
function triageText(t) {
  if (!t) return 'Nobody triaged this issue.';
  const parts = [`${t.resolution === 'resolved' ? `Resolved in ${t.resolved_in}` : 'Open'}, by ${t.changed_by} at ${t.changed_at}`];
  if (t.regressed_in) parts.push(`seen again in ${t.regressed_in}`);
  if (t.muted_until) parts.push(`muted until ${t.muted_until}`);
  if (t.muted_sessions_left !== null && t.muted_sessions_left !== undefined) parts.push(`muted for ${t.muted_sessions_left} more affected sessions`);
  if (t.note) parts.push(`note: ${t.note}`);
  return parts.join('; ');
}
