import { api, q, APIError } from '../api.js';
import { el, replace, table, clientText, shortened } from '../dom.js';
import { drawChart, color, describeChart } from '../charts.js';
import { whenChanged } from '../changes.js';
import { kindName, number, time } from '../format.js';
import { loadReleases, releaseParam, releaseSelect, releaseLabel, releaseBefore, navigatingSelect, option, newestCounted } from '../pickers.js';

const knownKinds = ['view_frame_mismatch', 'input_covered_by_keyboard', 'keyboard_without_input', 'interaction_lock'];

/** A line whose partial buckets (the one still in progress) are dashed and drawn as hollow
 * triangles; null entries (no sessions, or past now) are gaps, never a drop to 0. */
function line(label, values, partial, colour) {
  return {
    label, data: values, borderColor: colour, backgroundColor: colour, tension: 0.2, spanGaps: false,
    segment: { borderDash: (context) => (partial[context.p1DataIndex] ? [6, 4] : undefined) },
    pointStyle: partial.map((p) => (p ? 'triangle' : 'circle')),
    pointRadius: partial.map((p) => (p ? 6 : 3)),
    pointBackgroundColor: partial.map((p) => (p ? '#ffffff' : colour)),
  };
}

const options = (partialAt) => ({
  scales: { y: { beginAtZero: true, title: { display: true, text: 'reports / 1,000 sessions' } } },
  plugins: { tooltip: { callbacks: { footer: (items) => (items.some((i) => partialAt(i.datasetIndex, i.dataIndex)) ? 'partial: still in progress' : '') } } },
});

/** Glitches over time: base vs target aligned by days since the start of each release's bulk
 * of sessions (reports per 1,000 sessions, with a table of the same numbers), and the target by kind. */
export async function render(main, params, { go, settle }) {
  const app = params.get('app');
  const releases = await loadReleases(app);
  // `release=` (links made before the overlay) names the target.
  const target = releaseParam(releases, params.get('target') ?? params.get('release') ?? newestCounted(releases) ?? '');
  const base = releaseParam(releases, params.get('base') ?? releaseBefore(releases, target) ?? '');
  const kind = params.get('kind') ?? '';
  const bucket = params.get('bucket') === 'hour' ? 'hour' : 'day';
  const reopen = (change) => go('timeline', Object.fromEntries(Object.entries({ base, target, kind, bucket, ...change }).filter(([, v]) => v)));
  const kinds = [...new Set([...knownKinds, ...releases.flatMap((r) => Object.keys(r.reports_by_kind ?? {}))])];
  const what = kind ? kindName(kind) : 'keyboard glitches';
  const overlayChart = describeChart(el('div', { class: 'chart' }), 'Line chart: reports per 1,000 sessions of base and target, by days since the start of each release’s bulk of sessions');
  const overlayTable = el('div', { 'data-role': 'overlay' });
  const kindChart = describeChart(el('div', { class: 'chart' }), 'Line chart: reports per 1,000 sessions of the target release, by kind');
  const kindTable = el('div');
  replace(main, el('h1', {}, 'Glitches over time'),
    el('form', { class: 'inline' },
      el('label', {}, 'Base ', releaseSelect('base', releases, base, (chosen) => reopen({ base: chosen }))),
      el('label', {}, 'Target ', releaseSelect('target', releases, target, (chosen) => reopen({ target: chosen }))),
      el('label', {}, 'Kind ', navigatingSelect({ name: 'kind' },
        [option('', 'all kinds', !kind), kinds.map((k) => option(k, kindName(k), k === kind))], (chosen) => reopen({ kind: chosen })))),
    el('div', { class: 'card' },
      el('h2', {}, `${what[0].toUpperCase()}${what.slice(1)} per 1,000 sessions, by days since each release’s sessions took off`),
      overlayChart,
      el('p', { class: 'muted' }, 'Day 0 is the UTC day by which 1 % of the release’s sessions (at least 5) had started, so one session dated far earlier does not move it; what is dated before day 0 is counted under the chart, not drawn. Dashed, hollow triangle: a partial day (still in progress). Gaps: no sessions, or not yet.'),
      overlayTable),
    el('div', { class: 'card' },
      el('h2', {}, target ? [clientText(releaseLabel(releases, target)), `: ${what} per 1,000 sessions, by kind`] : 'By kind'),
      el('form', { class: 'inline' }, el('label', {}, 'Bucket ', navigatingSelect({ name: 'bucket' },
        ['hour', 'day'].map((b) => option(b, b, b === bucket)), (chosen) => reopen({ bucket: chosen })))),
      kindChart, el('details', {}, el('summary', {}, 'Table'), kindTable)));
  settle({ base, target, bucket });
  const kindQuery = kind ? `&kind=${q(kind)}` : '';
  const same = (message) => { overlayChart.hidden = true; replace(overlayTable, el('p', { class: 'error', 'data-role': 'same-release' }, message)); };
  let overlaySides = [];  // what the tooltips of the charts (drawn once, then updated in place) read
  let kindPartial = [];

  async function overlay() {
    if (!base || !target) { overlayChart.hidden = true; return replace(overlayTable, el('p', { class: 'muted' }, 'An overlay needs two releases.')); }
    if (base === target) return same(`Base and target are the same release (${releaseLabel(releases, base)}): pick two different releases.`);
    try {
      return await api.get(`/v1/apps/${q(app)}/overlay?base=${q(base)}&target=${q(target)}&bucket=day${kindQuery}`);
    } catch (error) {
      if (error instanceof APIError && error.code === 'same_release') return same(`Base and target are the same release: pick two different releases. (${error.message})`);
      throw error;
    }
  }

  function drawOverlay(data) {
    const sides = ['base', 'target'].map((role) => data.releases.find((r) => r.role === role)).filter(Boolean);
    overlaySides = sides;
    const colours = { base: color(7), target: color(0) };
    drawChart(overlayChart, {
      type: 'line',
      data: { labels: data.offsets.map((o) => `day ${o}`), datasets: sides.map((r) => line(shortened(`${r.role}: ${r.release}`, 40), r.rates, r.partial, colours[r.role])) },
      options: options((dataset, index) => overlaySides[dataset]?.partial[index]),
    });
    const cell = (r, i) => {
      if (r.sessions[i] === null || r.sessions[i] === undefined) return '—';
      const text = r.rates[i] === null || r.rates[i] === undefined ? 'no sessions' : number(r.rates[i], 1);
      return r.partial[i] ? el('span', {}, text, el('span', { class: 'badge partial' }, 'partial')) : text;
    };
    const count = (values, i) => (values[i] === null || values[i] === undefined ? '—' : number(values[i]));
    const headers = ['Day', ...sides.flatMap((r) => [{ label: `${r.role[0].toUpperCase()}${r.role.slice(1)} / 1k sessions`, num: true }, { label: 'sessions', num: true }, { label: 'reports', num: true }])];
    const grid = table(headers, data.offsets.map((offset, i) => ({ data: { offset, partial: sides.some((r) => r.partial[i]) },
      cells: [`day ${offset}`, ...sides.flatMap((r) => [cell(r, i), count(r.sessions, i), count(r.reports, i)])] })),
    (row) => (row.partial ? 'partial' : null));
    grid.setAttribute('data-role', 'overlay-table');
    grid.classList.add('compact');
    grid.prepend(el('caption', { class: 'sr-only' }, `${what[0].toUpperCase()}${what.slice(1)} per 1,000 sessions by day since the start of each release’s bulk of sessions: the chart’s numbers`));
    overlayChart.hidden = false;
    replace(overlayTable,
      el('p', { class: 'muted' }, sides.map((r, i) => [i ? '; ' : '', `${r.role[0].toUpperCase()}${r.role.slice(1)}: `, clientText(r.release, 'span', { 'data-role': `overlay-${r.role}` }),
        ` (day 0 ${time(r.aligned_start)}; first session ${time(r.first_session)}`,
        r.sessions_before_start ? el('span', { 'data-role': `before-start-${r.role}` }, `; ${number(r.sessions_before_start)} sessions and ${number(r.reports_before_start)} reports dated earlier, not drawn`) : null,
        ')']), '.'),
      el('div', { class: 'scroll' }, grid));
  }

  function drawKinds(data) {
    const partial = data.buckets.map((_, i) => (data.partial_buckets ?? []).includes(i));
    kindPartial = partial;
    const series = Object.entries(data.rates ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const labels = data.buckets.map((b) => (bucket === 'day' ? b.slice(0, 10) : b.slice(5, 16).replace('T', ' ')));
    drawChart(kindChart, {
      type: 'line',
      data: { labels, datasets: series.map(([k, values], index) => line(kindName(k), values, partial, color(index))) },
      options: options((_, index) => kindPartial[index]),
    });
    const rate = (values, i) => (values[i] === null || values[i] === undefined ? '—' : number(values[i], 1));
    replace(kindTable, el('div', { class: 'scroll' }, table(['Bucket (UTC)', { label: 'Sessions', num: true }, ...series.map(([k]) => ({ label: `${kindName(k)} / 1k`, num: true }))],
      labels.map((label, i) => ({ data: { partial: partial[i] }, cells: [partial[i] ? el('span', {}, label, el('span', { class: 'badge partial' }, 'partial')) : label,
        number(data.sessions?.[i]), ...series.map(([, values]) => rate(values, i))] })))));
  }

  async function refresh() {
    if (!target) return replace(overlayTable, el('p', { class: 'muted' }, 'No releases yet.'));
    const [pair, single] = await Promise.all([overlay(),
      api.get(`/v1/apps/${q(app)}/timeseries?release=${q(target)}&bucket=${bucket}${kindQuery}`)]);
    draw(pair, single);
  }
  const draw = whenChanged((pair, single) => {
    if (pair && pair.releases) drawOverlay(pair);
    drawKinds(single);
  });
  await refresh();
  return { refresh };
}
