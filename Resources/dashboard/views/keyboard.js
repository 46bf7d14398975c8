import { api, q } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { whenChanged } from '../changes.js';
import { number } from '../format.js';
import { loadReleases, releaseParam, releaseSelect } from '../pickers.js';

/** Keyboard heights per device model, mode and input mode; outliers highlighted. */
export async function render(main, params, { go }) {
  const app = params.get('app');
  const releases = await loadReleases(app);
  const release = releaseParam(releases, params.get('release') ?? '');
  const holder = el('div');
  replace(main, el('h1', {}, 'Keyboard heights'),
    el('form', { class: 'inline' }, el('label', {}, 'Release ', releaseSelect('release', releases, release,
      (chosen) => go('keyboard', chosen ? { release: chosen } : {}), [['', 'all releases']]))),
    holder);
  const draw = whenChanged((data) => {
    replace(holder,
      el('div', { class: 'scroll' }, table(['Model', 'Mode', 'Input mode', { label: 'Reports', num: true }, { label: 'Min', num: true }, { label: 'Median', num: true }, { label: 'Max', num: true }, 'Notes'],
        data.groups.map((g) => ({ data: g, cells: [clientText(g.model || '?'), clientText(g.mode || '?'), clientText(g.input_mode || '?'), number(g.reports), g.min, g.median, g.max,
          [g.outlier ? g.outlier_reason : null, g.height_differs_by_input_mode ? `height differs from ${g.height_differs_by_input_mode.join(', ')}: never hard-code one` : null].filter(Boolean).join('; ')] })),
        (g) => (g.outlier ? 'outlier' : null))),
      data.other_groups ? el('p', { class: 'muted', 'data-role': 'other-groups' }, `${number(data.other_groups)} more groups with fewer reports are not shown.`) : null,
      el('p', { class: 'muted' }, 'Outliers: heights of at least 90 % of the window — the zero frame of a dragged iPad keyboard taken as docked.'));
  });
  const refresh = async () => draw(await api.get(`/v1/apps/${q(app)}/keyboard${release ? `?release=${q(release)}` : ''}`));
  await refresh();
  return { refresh };
}
