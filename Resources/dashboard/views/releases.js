import { api, q } from '../api.js';
import { el, replace, table } from '../dom.js';
import { number, percent, time, kindName } from '../format.js';

/** The releases table: sessions, glitch-free rate, reports per 1,000 sessions by kind, actions, suspect reports. */
export async function render(main, params, { link }) {
  const app = params.get('app');
  const holder = el('div');
  replace(main, el('h1', {}, 'Releases of ', el('span', {}, app)), holder);
  let last = null;
  async function refresh() {
    const data = await api.get(`/v1/apps/${q(app)}/releases`);
    const key = JSON.stringify(data);
    if (key === last) return;
    last = key;
    const kinds = [...new Set(data.releases.flatMap((r) => Object.keys(r.reports_by_kind)))].sort();
    const headers = ['Release', { label: 'Sessions', num: true }, { label: 'Glitch-free', num: true }, { label: 'Reports / 1k sessions', num: true },
      ...kinds.map((k) => ({ label: `${kindName(k)} / 1k`, num: true })), { label: 'Auto-fixed', num: true }, { label: 'Test crashes', num: true },
      { label: 'Suspect', num: true }, 'Last seen'];
    const rows = data.releases.map((r, index) => ({
      data: r,
      cells: [
        el('a', { href: link('issues', { release: r.release }) }, r.release),
        number(r.sessions), percent(r.glitch_free_session_rate), number(r.reports_per_1k_sessions, 1),
        ...kinds.map((k) => number(r.reports_per_1k_sessions_by_kind?.[k] ?? (r.sessions ? 0 : null), 1)),
        number(r.auto_fixed), number(r.test_crashes), number(r.suspect_reports), time(r.last_seen),
      ],
      index,
    }));
    const older = data.releases[1], newer = data.releases[0];
    replace(holder,
      table(headers, rows),
      el('p', { class: 'muted' }, 'Suspect: reports sent while the app was inactive or in the background (other apps’ keyboard notifications reach it); kept out of the rates.'),
      older && newer ? el('p', {}, el('a', { href: link('compare', { base: older.release, target: newer.release }) }, `Compare ${older.release} → ${newer.release}`)) : null);
  }
  await refresh();
  return { refresh };
}
