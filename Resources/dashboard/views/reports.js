import { api, q } from '../api.js';
import { el, replace, table } from '../dom.js';
import { time, kindName } from '../format.js';

/** Reports of an issue (or a release, a kind, a screen), newest first, page by page. */
export async function render(main, params, { link }) {
  const app = params.get('app');
  const filters = ['release', 'kind', 'screen', 'fingerprint'].filter((f) => params.get(f)).map((f) => `&${f}=${q(params.get(f))}`).join('');
  const holder = el('div');
  const more = el('button', {}, 'More');
  replace(main, el('h1', {}, 'Reports'), holder, el('p', {}, more));
  let cursor = null;
  const rows = [];
  async function page() {
    const data = await api.get(`/v1/apps/${q(app)}/reports?limit=50${filters}${cursor ? `&cursor=${q(cursor)}` : ''}`);
    rows.push(...data.reports);
    cursor = data.next_cursor;
    more.hidden = !cursor;
    replace(holder, table(['Occurred', 'Kind', 'Screen', 'View', 'Release', 'State'],
      rows.map((r) => ({ data: r, cells: [el('a', { href: link('report', { id: r.id, app }) }, time(r.occurred_at)), kindName(r.kind),
        r.report?.screen ?? '—', r.report?.view?.name ?? '—', r.release, r.suspect ? `${r.report?.app_state} (suspect)` : 'active'] }))));
  }
  more.addEventListener('click', page);
  await page();
  return {};
}
