import { api, q } from '../api.js';
import { el, replace, table } from '../dom.js';
import { number, time, kindName } from '../format.js';

/** Top issues of a release, with new / regressed badges; each leads to its reports. */
export async function render(main, params, { link, go, settle }) {
  const app = params.get('app');
  const releases = (await api.get(`/v1/apps/${q(app)}/releases`)).releases.map((r) => r.release);
  const release = params.get('release') ?? releases[0] ?? '';
  const holder = el('div');
  replace(main, el('h1', {}, 'Top issues'),
    el('form', { class: 'inline' }, el('label', {}, 'Release ', el('select', { onchange: (e) => go('issues', { release: e.target.value }) },
      releases.map((r) => el('option', { value: r, selected: r === release ? 'selected' : null }, r))))),
    holder);
  settle({ release });
  let last = null;
  async function refresh() {
    if (!release) return replace(holder, 'No releases yet.');
    const data = await api.get(`/v1/apps/${q(app)}/issues?release=${q(release)}&limit=50`);
    const key = JSON.stringify(data);
    if (key === last) return;
    last = key;
    replace(holder, table(
      ['Issue', 'Screen', 'View', 'Keyboard', { label: 'Reports', num: true }, { label: '/1k sessions', num: true }, { label: 'Sessions', num: true }, 'First release', 'Last seen'],
      data.issues.map((i) => ({ data: i, cells: [
        el('span', {}, el('a', { href: link('reports', { fingerprint: i.fingerprint, release }) }, kindName(i.kind)),
          i.new ? el('span', { class: 'badge new' }, 'new') : null, i.regressed ? el('span', { class: 'badge regressed' }, 'regressed') : null),
        i.screen ?? '—', i.view ?? '—', i.keyboard_mode ?? '—', number(i.reports), number(i.reports_per_1k_sessions, 1),
        number(i.affected_sessions), i.first_release, time(i.last_seen)] }))));
  }
  await refresh();
  return { refresh };
}
