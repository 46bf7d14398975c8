import { api, q } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { whenChanged } from '../changes.js';
import { number, percent, time, kindName } from '../format.js';
import { flooded, concentrationText } from '../comparison.js';
import { unlistedLine, releaseActions, renderUnlisted } from './admission.js';

const PAGE = 100;

/** The releases table: sessions, sessions with a glitch, reports per 1,000 sessions by kind,
 * actions, reports counted apart (suspect, flooded) and how concentrated the reports are; the
 * unlisted releases held apart, and for operators and admins Delete and the unlisted releases' card. */
export async function render(main, params, { link, session }) {
  const app = params.get('app');
  // Releases are declared, admitted, unlisted and deleted by operators and admins.
  const admin = session?.role === 'admin' || session?.role === 'operator';
  const holder = el('div');
  const adminHolder = el('div');
  let offset = 0;
  replace(main, el('h1', {}, 'Releases of ', el('span', {}, app)), holder, adminHolder);
  const actions = admin ? releaseActions(app, adminHolder, async () => { await refresh(); await unlisted.refresh(); }) : null;
  const draw = whenChanged((data) => {
    const kinds = [...new Set(data.releases.flatMap((r) => Object.keys(r.reports_by_kind)))].sort();
    // While the app's App Attest is on, the share of each release's sessions from attested installs.
    const attestation = data.releases.some((r) => r.attested_sessions !== null && r.attested_sessions !== undefined);
    const attested = (r) => el('span', { 'data-role': 'attested-share', title: `${number(r.attested_sessions)} of ${number(r.sessions)} sessions from attested installs` },
      r.sessions ? percent(r.attested_sessions / r.sessions) : '—');
    // What a decision rests on first (issue 44: inside 1,300 px): the rates, how concentrated
    // the reports are and what was kept out of them; the detail by kind after; actions kept in view.
    const headers = ['Release', { label: 'Sessions', num: true }, ...(attestation ? [{ label: 'Attested', num: true }] : []), { label: 'With a glitch', num: true }, { label: 'Glitch-free', num: true }, { label: 'Reports / 1k', num: true },
      { label: 'Top 1 % of installs', num: true }, { label: 'Suspect', num: true }, { label: 'Flooded', num: true },
      ...kinds.map((k) => ({ label: `${kindName(k)} / 1k`, num: true })), { label: 'Auto-fixed', num: true }, { label: 'Test crashes', num: true },
      { label: 'Sessions held apart', num: true }, { label: 'Reports of unknown sessions', num: true },
      'Last seen', ...(admin ? [{ label: 'Actions', end: true }] : [])];
    const share = (c) => c?.top_installs_report_share === null || c?.top_installs_report_share === undefined ? '—'
      : el('span', { class: flooded(c) ? 'warn' : null, title: concentrationText(c), 'data-role': 'concentration' }, percent(c.top_installs_report_share));
    const rows = data.releases.map((r, index) => ({
      data: r,
      cells: [
        clientText(r.release, 'a', { href: link('issues', { release: r.id }) }),
        number(r.sessions), ...(attestation ? [attested(r)] : []), percent(r.affected_session_rate), percent(r.glitch_free_session_rate), number(r.reports_per_1k_sessions, 1),
        share(r.concentration), number(r.suspect_reports), number(r.flooded_reports),
        ...kinds.map((k) => number(r.reports_per_1k_sessions_by_kind?.[k] ?? (r.sessions ? 0 : null), 1)),
        number(r.auto_fixed), number(r.test_crashes),
        el('span', { class: r.implausible_sessions ? 'warn' : null, 'data-role': 'implausible-sessions' }, number(r.implausible_sessions ?? 0)),
        el('span', { 'data-role': 'unknown-session-reports' }, number(r.unknown_session_reports ?? 0)), time(r.last_seen),
        ...(admin ? [el('button', { type: 'button', 'data-delete': r.id, 'aria-label': `Delete ${r.release}`,
          onclick: () => actions.delete({ ...r, all_reports: r.reports + r.suspect_reports + r.flooded_reports }) }, 'Delete')] : []),
      ],
      index,
    }));
    const older = data.releases[1], newer = data.releases[0];
    const floods = data.releases.filter((r) => flooded(r.concentration));
    const last = data.offset + data.releases.length;
    replace(holder,
      el('div', { class: 'scroll' }, table(headers, rows)),
      el('p', {}, el('a', { href: `/v1/apps/${q(app)}/releases.csv?limit=1000`, download: '', 'data-role': 'csv' }, 'Download CSV'),
        el('small', { class: 'muted' }, ' (every listed release, up to 1,000)')),
      data.total > data.releases.length ? el('p', { 'data-role': 'releases-page' }, `${number(data.offset + 1)}–${number(last)} of ${number(data.total)} listed releases `,
        el('button', { type: 'button', disabled: data.offset === 0 ? 'disabled' : null, onclick: () => { offset = Math.max(0, offset - PAGE); refresh(); } }, 'Newer'), ' ',
        el('button', { type: 'button', disabled: last >= data.total ? 'disabled' : null, onclick: () => { offset += PAGE; refresh(); } }, 'Older')) : null,
      unlistedLine(data.unlisted),
      floods.map((r) => el('p', { class: 'warning', 'data-role': 'flood-warning' }, '⚠ ', clientText(r.release), `: the ${concentrationText(r.concentration)}.`)),
      el('p', { class: 'muted' }, attestation ? 'Attested: share of the sessions from installs whose App Attest key the server verified (a real device running this app); compare, the gate and alerts can rest on those alone. ' : null,
        'With a glitch: share of sessions with at least one report. Suspect: reports sent while the app was inactive or in the background ',
        '(other apps’ keyboard notifications reach it). Flooded: reports past the per-session cap for one glitch. Both are kept out of the rates. ',
        'Sessions held apart: session starts stored but in no rate — past the app’s limits per install or per network, or dated far from their arrival. ',
        'Reports of unknown sessions: reports whose session never had a counted start; counted as reports, never as sessions with a glitch. ',
        'Top 1 % of installs: the share of the release’s reports its most reporting installs sent — near 100 % is a flood from a few devices.'),
      older && newer ? el('p', {}, el('a', { href: link('compare', { base: older.id, target: newer.id }) }, 'Compare ', clientText(older.release), ' → ', clientText(newer.release))) : null);
  });
  const refresh = async () => draw(await api.get(`/v1/apps/${q(app)}/releases?offset=${offset}&limit=${PAGE}`));
  await refresh();
  const unlisted = admin ? await renderUnlisted(adminHolder, app, actions) : { refresh: async () => {} };
  return { refresh: async () => { if (!adminHolder.querySelector('dialog[open]')) { await refresh(); await unlisted.refresh(); } } };
}
