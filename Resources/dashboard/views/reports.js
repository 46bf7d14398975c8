import { api, q, APIError } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { time, kindName } from '../format.js';
import { loadReleases, releaseParam, releaseLabel } from '../pickers.js';

/** Reports of an issue (or a release, a kind, a screen), 50 at a time ("More"), sorted by when
 * they occurred — newest first, or oldest first from the column's header. */
export async function render(main, params, { link }) {
  const app = params.get('app');
  // A release is sent as its id (a link with display text, made before ids, still resolves).
  const releases = params.get('release') ? await loadReleases(app) : [];
  const chosen = { ...Object.fromEntries(params), release: params.get('release') ? releaseParam(releases, params.get('release')) : null };
  const filters = ['release', 'kind', 'screen', 'fingerprint'].filter((f) => chosen[f]).map((f) => `&${f}=${q(chosen[f])}`).join('');
  const holder = el('div');
  const more = el('button', { type: 'button' }, 'More');
  const moreStatus = el('span', { role: 'status', 'data-role': 'more-status' });
  const releaseText = () => clientText(releaseLabel(releases, chosen.release));
  const described = [chosen.release ? ['release ', releaseText()] : null, chosen.kind ? kindName(chosen.kind) : null,
    chosen.screen ? ['screen ', clientText(chosen.screen)] : null, chosen.fingerprint ? `issue ${chosen.fingerprint}` : null].filter(Boolean);
  // The title says whose reports these are: the issue's title (as the issues table shows it) and the release.
  let issue = null;
  if (chosen.fingerprint && chosen.release) {
    issue = (await api.get(`/v1/apps/${q(app)}/issues?release=${q(chosen.release)}&limit=200`)).issues.find((i) => i.fingerprint === chosen.fingerprint) ?? null;
  }
  const heading = chosen.fingerprint
    ? el('h1', {}, 'Reports of ', clientText(issue ? issue.title ?? kindName(issue.kind) : `issue ${chosen.fingerprint}`),
      chosen.release ? [' in ', releaseText()] : null)
    : el('h1', {}, 'Reports', chosen.release ? [' of ', releaseText()] : null);
  const back = el('p', {}, el('a', { href: link('issues', chosen.release ? { release: chosen.release } : {}), 'data-role': 'back' }, '← Back to the issues',
    chosen.release ? [' of ', releaseText()] : ''));
  replace(main, back, heading, issue ? el('p', { class: 'muted', 'data-role': 'counts' },
    `${issue.reports} report${issue.reports === 1 ? '' : 's'} counted in the rates; reports sent while the app was inactive (suspect) or past the per-session cap (flooded) are listed too, greyed and marked.`) : null,
  described.length ? el('p', { class: 'muted', 'data-role': 'filters' }, 'Only ', described.map((d, i) => [i ? ', ' : '', d]), '.') : null,
  holder, el('p', {}, more, ' ', moreStatus),
  el('p', { class: 'muted' }, 'Suspect: sent while the app was inactive or in the background. Flooded: past the per-session cap for one glitch. Both are stored and kept out of the rates.'));

  let cursor = null;
  let order = 'descending';
  const rows = [];
  const badges = (r) => [r.suspect ? el('span', { class: 'badge suspect', title: 'sent while the app was not active; kept out of the rates' }, 'suspect') : null,
    r.flooded ? el('span', { class: 'badge flooded', title: 'past the per-session cap for this glitch; kept out of the rates' }, 'flooded') : null];

  function draw() {
    const sorted = [...rows].sort((a, b) => (a.occurred_at < b.occurred_at ? -1 : a.occurred_at > b.occurred_at ? 1 : 0) * (order === 'ascending' ? 1 : -1));
    const refocus = holder.contains(document.activeElement) && document.activeElement.matches('button.sort');
    const sort = el('button', { type: 'button', class: 'sort', 'data-role': 'sort-occurred',
      onclick: () => { order = order === 'descending' ? 'ascending' : 'descending'; draw(); } },
    'Occurred ', el('span', { 'aria-hidden': 'true' }, order === 'descending' ? '↓' : '↑'),
    el('span', { class: 'sr-only' }, order === 'descending' ? '(newest first; sort oldest first)' : '(oldest first; sort newest first)'));
    replace(holder, el('div', { class: 'scroll' }, table([{ label: sort, sort: order }, 'Kind', 'Screen', 'View', 'Release', 'State'],
      sorted.map((r) => ({ data: r, cells: [el('a', { href: link('report', { id: r.id, app }) }, time(r.occurred_at)), kindName(r.kind),
        clientText(r.report?.screen ?? '—'), clientText(r.report?.view?.name ?? '—'), clientText(r.release), el('span', {}, clientText(r.report?.app_state ?? '—'), badges(r))] })),
      (r) => (r.flooded || r.suspect ? 'counted-apart' : null))));
    if (refocus) holder.querySelector('button.sort').focus();
  }

  async function page() {
    const data = await api.get(`/v1/apps/${q(app)}/reports?limit=50${filters}${cursor ? `&cursor=${q(cursor)}` : ''}`);
    rows.push(...data.reports);
    cursor = data.next_cursor;
    more.hidden = !cursor;
    draw();
  }

  // "More" answers every outcome on the page: the next rows, the end (the button goes), or
  // what went wrong, with the button left to try again.
  more.addEventListener('click', async () => {
    more.disabled = true;
    moreStatus.textContent = '';
    try {
      await page();
      if (!cursor) moreStatus.textContent = `All ${rows.length} reports shown.`;
    } catch (error) {
      replace(moreStatus, el('span', { class: 'error' }, error instanceof APIError && error.status === 401
        ? ['You were signed out. ', el('button', { type: 'button', onclick: () => location.reload() }, 'Sign in again')]
        : `Could not load more reports (${error instanceof APIError ? error.message : 'the server did not answer'}); try again.`));
    } finally {
      more.disabled = false;
    }
  });
  await page();
  return {};
}
