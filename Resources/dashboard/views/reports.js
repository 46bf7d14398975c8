import { api, q } from '../api.js';
import { el, replace, table } from '../dom.js';
import { time, kindName } from '../format.js';
import { loadReleases, releaseParam, releaseLabel } from '../pickers.js';

/** Reports of an issue (or a release, a kind, a screen), newest first, page by page. */
export async function render(main, params, { link }) {
  const app = params.get('app');
  // A release is sent as its id (a link with display text, made before ids, still resolves).
  const releases = params.get('release') ? await loadReleases(app) : [];
  const chosen = { ...Object.fromEntries(params), release: params.get('release') ? releaseParam(releases, params.get('release')) : null };
  const filters = ['release', 'kind', 'screen', 'fingerprint'].filter((f) => chosen[f]).map((f) => `&${f}=${q(chosen[f])}`).join('');
  const holder = el('div');
  const more = el('button', {}, 'More');
  const described = [chosen.release ? `release ${releaseLabel(releases, chosen.release)}` : null, chosen.kind ? kindName(chosen.kind) : null,
    chosen.screen ? `screen ${chosen.screen}` : null, chosen.fingerprint ? `issue ${chosen.fingerprint}` : null].filter(Boolean).join(', ');
  // The title says whose reports these are: the issue's title (as the issues table shows it) and the release.
  let issue = null;
  if (chosen.fingerprint && chosen.release) {
    issue = (await api.get(`/v1/apps/${q(app)}/issues?release=${q(chosen.release)}&limit=200`)).issues.find((i) => i.fingerprint === chosen.fingerprint) ?? null;
  }
  const heading = chosen.fingerprint
    ? el('h1', {}, 'Reports of ', el('span', { class: 'clip', title: issue?.title ?? chosen.fingerprint }, issue ? issue.title ?? kindName(issue.kind) : `issue ${chosen.fingerprint}`),
      chosen.release ? [' in ', releaseLabel(releases, chosen.release)] : null)
    : el('h1', {}, 'Reports', chosen.release ? [' of ', releaseLabel(releases, chosen.release)] : null);
  const back = el('p', {}, el('a', { href: link('issues', chosen.release ? { release: chosen.release } : {}), 'data-role': 'back' }, '← Back to the issues',
    chosen.release ? ` of ${releaseLabel(releases, chosen.release)}` : ''));
  replace(main, back, heading, issue ? el('p', { class: 'muted', 'data-role': 'counts' },
    `${issue.reports} report${issue.reports === 1 ? '' : 's'} counted in the rates; reports sent while the app was inactive (suspect) or past the per-session cap (flooded) are listed too, greyed and marked.`) : null,
  described ? el('p', { class: 'muted', 'data-role': 'filters' }, `Only ${described}.`) : null, holder, el('p', {}, more),
    el('p', { class: 'muted' }, 'Suspect: sent while the app was inactive or in the background. Flooded: past the per-session cap for one glitch. Both are stored and kept out of the rates.'));
  let cursor = null;
  const rows = [];
  async function page() {
    const data = await api.get(`/v1/apps/${q(app)}/reports?limit=50${filters}${cursor ? `&cursor=${q(cursor)}` : ''}`);
    rows.push(...data.reports);
    cursor = data.next_cursor;
    more.hidden = !cursor;
    const badges = (r) => [r.suspect ? el('span', { class: 'badge suspect', title: 'sent while the app was not active; kept out of the rates' }, 'suspect') : null,
      r.flooded ? el('span', { class: 'badge flooded', title: 'past the per-session cap for this glitch; kept out of the rates' }, 'flooded') : null];
    replace(holder, el('div', { class: 'scroll' }, table(['Occurred', 'Kind', 'Screen', 'View', 'Release', 'State'],
      rows.map((r) => ({ data: r, cells: [el('a', { href: link('report', { id: r.id, app }) }, time(r.occurred_at)), kindName(r.kind),
        r.report?.screen ?? '—', r.report?.view?.name ?? '—', r.release, el('span', {}, r.report?.app_state ?? '—', badges(r))] })),
      (r) => (r.flooded || r.suspect ? 'counted-apart' : null))));
  }
  more.addEventListener('click', page);
  await page();
  return {};
}
