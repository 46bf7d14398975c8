import { api, q } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { whenChanged } from '../changes.js';
import { number, percent, time, kindName } from '../format.js';
import { flooded, concentrationText } from '../comparison.js';

/** The releases table: sessions, sessions with a glitch, reports per 1,000 sessions by kind,
 * actions, reports counted apart (suspect, flooded) and how concentrated the reports are. */
export async function render(main, params, { link }) {
  const app = params.get('app');
  const holder = el('div');
  replace(main, el('h1', {}, 'Releases of ', el('span', {}, app)), holder);
  const draw = whenChanged((data) => {
    const kinds = [...new Set(data.releases.flatMap((r) => Object.keys(r.reports_by_kind)))].sort();
    const headers = ['Release', { label: 'Sessions', num: true }, { label: 'With a glitch', num: true }, { label: 'Glitch-free', num: true }, { label: 'Reports / 1k sessions', num: true },
      ...kinds.map((k) => ({ label: `${kindName(k)} / 1k`, num: true })), { label: 'Auto-fixed', num: true }, { label: 'Test crashes', num: true },
      { label: 'Suspect', num: true }, { label: 'Flooded', num: true }, { label: 'Top 1 % of installs', num: true }, 'Last seen'];
    const share = (c) => c?.top_installs_report_share === null || c?.top_installs_report_share === undefined ? '—'
      : el('span', { class: flooded(c) ? 'warn' : null, title: concentrationText(c), 'data-role': 'concentration' }, percent(c.top_installs_report_share));
    const rows = data.releases.map((r, index) => ({
      data: r,
      cells: [
        clientText(r.release, 'a', { href: link('issues', { release: r.id }) }),
        number(r.sessions), percent(r.affected_session_rate), percent(r.glitch_free_session_rate), number(r.reports_per_1k_sessions, 1),
        ...kinds.map((k) => number(r.reports_per_1k_sessions_by_kind?.[k] ?? (r.sessions ? 0 : null), 1)),
        number(r.auto_fixed), number(r.test_crashes), number(r.suspect_reports), number(r.flooded_reports), share(r.concentration), time(r.last_seen),
      ],
      index,
    }));
    const older = data.releases[1], newer = data.releases[0];
    const floods = data.releases.filter((r) => flooded(r.concentration));
    replace(holder,
      el('div', { class: 'scroll' }, table(headers, rows)),
      floods.map((r) => el('p', { class: 'warning', 'data-role': 'flood-warning' }, '⚠ ', clientText(r.release), `: the ${concentrationText(r.concentration)}.`)),
      el('p', { class: 'muted' }, 'With a glitch: share of sessions with at least one report. Suspect: reports sent while the app was inactive or in the background ',
        '(other apps’ keyboard notifications reach it). Flooded: reports past the per-session cap for one glitch. Both are kept out of the rates. ',
        'Top 1 % of installs: the share of the release’s reports its most reporting installs sent — near 100 % is a flood from a few devices.'),
      older && newer ? el('p', {}, el('a', { href: link('compare', { base: older.id, target: newer.id }) }, 'Compare ', clientText(older.release), ' → ', clientText(newer.release))) : null);
  });
  const refresh = async () => draw(await api.get(`/v1/apps/${q(app)}/releases`));
  await refresh();
  return { refresh };
}
