import { api, q } from '../api.js';
import { el, replace } from '../dom.js';
import { drawChart, color } from '../charts.js';
import { kindName } from '../format.js';

/** Glitches over time, one line per kind. */
export async function render(main, params, { go, settle }) {
  const app = params.get('app');
  const releases = (await api.get(`/v1/apps/${q(app)}/releases`)).releases.map((r) => r.release);
  const release = params.get('release') ?? releases[0] ?? '';
  const bucket = params.get('bucket') ?? 'day';
  const chart = el('div', { class: 'chart' });
  replace(main, el('h1', {}, 'Glitches over time'),
    el('form', { class: 'inline' },
      el('label', {}, 'Release ', el('select', { onchange: (e) => go('timeline', { release: e.target.value, bucket }) },
        releases.map((r) => el('option', { value: r, selected: r === release ? 'selected' : null }, r)))),
      el('label', {}, 'Bucket ', el('select', { onchange: (e) => go('timeline', { release, bucket: e.target.value }) },
        ['hour', 'day'].map((b) => el('option', { value: b, selected: b === bucket ? 'selected' : null }, b))))),
    el('div', { class: 'card' }, chart));
  settle({ release, bucket });
  let last = null;
  async function refresh() {
    if (!release) return;
    const data = await api.get(`/v1/apps/${q(app)}/timeseries?release=${q(release)}&bucket=${bucket}`);
    const key = JSON.stringify(data);
    if (key === last) return;
    last = key;
    drawChart(chart, {
      type: 'line',
      data: {
        labels: data.buckets.map((b) => bucket === 'day' ? b.slice(0, 10) : b.slice(5, 16).replace('T', ' ')),
        datasets: Object.entries(data.series).sort().map(([kind, counts], index) => ({ label: kindName(kind), data: counts, borderColor: color(index), backgroundColor: color(index), tension: 0.2 })),
      },
    });
  }
  await refresh();
  return { refresh };
}
