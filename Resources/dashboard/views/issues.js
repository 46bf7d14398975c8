import { api, q } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { whenChanged } from '../changes.js';
import { number, percent, time, kindName } from '../format.js';
import { loadReleases, releaseParam, releaseSelect, releaseLabel } from '../pickers.js';

/** Top issues of a release, with new / regressed badges and the previous release's rate to
 * check them against; each leads to its reports. */
export async function render(main, params, { link, go, settle }) {
  const app = params.get('app');
  const releases = await loadReleases(app);
  const release = releaseParam(releases, params.get('release') ?? releases[0]?.id ?? '');
  const holder = el('div');
  replace(main, el('h1', {}, 'Top issues', release ? [' of ', clientText(releaseLabel(releases, release), 'span', { 'data-role': 'release' })] : null),
    el('form', { class: 'inline' }, el('label', {}, 'Release ', releaseSelect('release', releases, release, (chosen) => go('issues', { release: chosen })))),
    holder);
  settle({ release });
  const draw = whenChanged((data) => {
    const previous = (p) => !p ? '—' : el('span', { title: `${p.release}: ${number(p.affected_sessions)} of ${number(p.sessions)} sessions, ${number(p.reports_per_1k_sessions, 1)} reports / 1k` },
      percent(p.affected_session_rate), el('small', { class: 'muted' }, ' in ', clientText(p.release)));
    replace(holder,
      data.issues.length ? el('div', { class: 'scroll' }, table(
        ['Issue', { label: 'Sessions with it', num: true }, { label: 'Rate', num: true }, { label: 'Previous release', num: true },
          { label: 'Reports', num: true }, { label: '/1k sessions', num: true }, { label: 'Flooded', num: true }, 'First release', 'Last seen'],
        data.issues.map((i) => ({ data: i, cells: [
          el('span', {}, clientText(i.title ?? kindName(i.kind), 'a', { href: link('reports', { fingerprint: i.fingerprint, release }) }),
            i.new ? el('span', { class: 'badge new' }, 'new') : null, i.regressed ? el('span', { class: 'badge regressed' }, 'regressed') : null),
          number(i.affected_sessions), percent(i.affected_session_rate), previous(i.previous),
          number(i.reports), number(i.reports_per_1k_sessions, 1), number(i.flooded_reports), clientText(i.first_release), time(i.last_seen)] })))) :
        el('p', { class: 'muted' }, 'No issues in this release.'),
      el('p', {}, el('a', { href: `/v1/apps/${q(app)}/issues.csv?release=${q(release)}&limit=1000`, download: '', 'data-role': 'csv' }, 'Download CSV'),
        el('small', { class: 'muted' }, ' (this release’s issues, up to 1,000)')),
      el('p', { class: 'muted' }, 'Rate: share of the release’s sessions with this issue. New: first seen in this release. Regressed: its rate rose significantly ',
        'against the previous release (95 % interval above 1, at least 5 sessions). Flooded: reports past the per-session cap, kept out of the rates.'));
  });
  async function refresh() {
    if (!release) return replace(holder, 'No releases yet.');
    draw(await api.get(`/v1/apps/${q(app)}/issues?release=${q(release)}&limit=50`));
  }
  await refresh();
  return { refresh };
}
