import { api, q, APIError } from '../api.js';
import { el, replace, table, clientText, shortened } from '../dom.js';
import { drawChart, color, describeChart } from '../charts.js';
import { whenChanged } from '../changes.js';
import { kindName, number, percent, time } from '../format.js';
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

/** What the charts plot (issue 44, point 4): the share of sessions with a glitch by default —
 * the measure Compare's verdicts are on — or reports per 1,000 sessions. */
const MEASURES = {
  share: {
    overlay: 'shares', series: 'shares', axis: '% of sessions with a glitch', heading: 'share of sessions with', column: '% of sessions with a glitch',
    kindColumn: '% of sessions', drawn: (v) => (v === null || v === undefined ? null : v * 100), cell: (v) => percent(v),
  },
  rate: {
    overlay: 'rates', series: 'rates', axis: 'reports / 1,000 sessions', heading: 'reports per 1,000 sessions of', column: '/ 1k sessions',
    kindColumn: '/ 1k', drawn: (v) => v ?? null, cell: (v) => number(v, 1),
  },
};

const options = (partialAt, axis) => ({
  scales: { y: { beginAtZero: true, title: { display: true, text: axis } } },
  plugins: { tooltip: { callbacks: { footer: (items) => (items.some((i) => partialAt(i.datasetIndex, i.dataIndex)) ? 'partial: still in progress' : '') } } },
});

/** Glitches over time: base vs target aligned by days since the start of each release's bulk
 * of sessions (the share of sessions with a glitch, or reports per 1,000 sessions, with a
 * table of the same numbers), and the target by kind. */
export async function render(main, params, { go, settle }) {
  const app = params.get('app');
  const releases = await loadReleases(app);
  // `release=` (links made before the overlay) names the target.
  const target = releaseParam(releases, params.get('target') ?? params.get('release') ?? newestCounted(releases) ?? '');
  const base = releaseParam(releases, params.get('base') ?? releaseBefore(releases, target) ?? '');
  const kind = params.get('kind') ?? '';
  const bucket = params.get('bucket') === 'hour' ? 'hour' : 'day';
  // Chosen, or (unset) the share — unless a release's affected sessions of before the upgrade have no day.
  const chosenMeasure = MEASURES[params.get('measure')] ? params.get('measure') : null;
  let measure = MEASURES[chosenMeasure ?? 'share'];
  const reopen = (change) => go('timeline', Object.fromEntries(Object.entries({ base, target, kind, bucket, measure: chosenMeasure, ...change }).filter(([, v]) => v)));
  const kinds = [...new Set([...knownKinds, ...releases.flatMap((r) => Object.keys(r.reports_by_kind ?? {}))])];
  const what = kind ? kindName(kind) : 'keyboard glitches';
  const overlayChart = el('div', { class: 'chart' });
  const overlayTable = el('div', { 'data-role': 'overlay' });
  const kindChart = el('div', { class: 'chart' });
  const kindTable = el('div');
  const overlayHeading = el('h2', { 'data-role': 'overlay-heading' });
  const kindHeading = el('h2', { 'data-role': 'kind-heading' });
  const measureNote = el('p', { class: 'muted', 'data-role': 'measure-note', hidden: 'hidden' });
  const measureSelect = navigatingSelect({ name: 'measure' }, [option('share', 'share of sessions with a glitch', measure === MEASURES.share),
    option('rate', 'reports per 1,000 sessions', measure === MEASURES.rate)], (chosen) => reopen({ measure: chosen }));
  /** Names the charts, headings and the measure picker after the measure drawn. */
  const name = () => {
    measureSelect.value = measure === MEASURES.share ? 'share' : 'rate';
    describeChart(overlayChart, `Line chart: ${measure.axis} of base and target, by days since the start of each release’s bulk of sessions`);
    describeChart(kindChart, `Line chart: ${measure.axis} of the target release, by kind`);
    const title = `${measure.heading} ${what}`;
    replace(overlayHeading, `${title[0].toUpperCase()}${title.slice(1)}, by days since each release’s sessions took off`);
    replace(kindHeading, target ? [clientText(releaseLabel(releases, target)), `: ${title}, by kind`] : 'By kind');
  };
  name();
  replace(main, el('h1', {}, 'Glitches over time'),
    el('form', { class: 'inline' },
      el('label', {}, 'Base ', releaseSelect('base', releases, base, (chosen) => reopen({ base: chosen }))),
      el('label', {}, 'Target ', releaseSelect('target', releases, target, (chosen) => reopen({ target: chosen }))),
      el('label', {}, 'Kind ', navigatingSelect({ name: 'kind' },
        [option('', 'all kinds', !kind), kinds.map((k) => option(k, kindName(k), k === kind))], (chosen) => reopen({ kind: chosen }))),
      el('label', {}, 'Measure ', measureSelect)),
    el('div', { class: 'card' },
      overlayHeading,
      measureNote,
      overlayChart,
      el('p', { class: 'muted' }, 'Share of sessions with a glitch: the sessions whose first glitch (of the kind chosen) is dated that day, over the sessions started that day — the measure Compare’s verdicts are on. ',
        'Day 0 is the UTC day by which 1 % of the release’s sessions (at least 5) had started, so one session dated far earlier does not move it; once the release has 50 sessions it is kept, so day 3 stays day 3 as late uploads arrive. ',
        'What is dated before day 0 is counted under the chart, not drawn. Dashed, hollow triangle: a partial day (still in progress). Gaps: no sessions, or not yet.'),
      overlayTable),
    el('div', { class: 'card' },
      kindHeading,
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
    // Affected sessions recorded before the server kept their day: a share would read low.
    const undated = sides.filter((r) => r.affected_sessions_without_hour > 0);
    if (!chosenMeasure) measure = undated.length ? MEASURES.rate : MEASURES.share;
    name();
    measureNote.hidden = !undated.length;
    replace(measureNote, undated.length ? [
      measure === MEASURES.rate && !chosenMeasure ? 'Reports per 1,000 sessions are drawn: ' : 'The share reads low: ',
      undated.map((r, i) => [i ? ' and ' : '', `${number(r.affected_sessions_without_hour)} affected sessions of `, clientText(r.release)]),
      ' were recorded before this server kept the day of each session’s first glitch, so they are in no day.'] : '');
    const colours = { base: color(7), target: color(0) };
    drawChart(overlayChart, {
      type: 'line',
      data: { labels: data.offsets.map((o) => `day ${o}`), datasets: sides.map((r) => line(shortened(`${r.role}: ${r.release}`, 40), (r[measure.overlay] ?? []).map(measure.drawn), r.partial, colours[r.role])) },
      options: options((dataset, index) => overlaySides[dataset]?.partial[index], measure.axis),
    });
    const cell = (r, i) => {
      if (r.sessions[i] === null || r.sessions[i] === undefined) return '—';
      const value = r[measure.overlay]?.[i];
      const text = value === null || value === undefined ? 'no sessions' : measure.cell(value);
      return r.partial[i] ? el('span', {}, text, el('span', { class: 'badge partial' }, 'partial')) : text;
    };
    const count = (values, i) => (values?.[i] === null || values?.[i] === undefined ? '—' : number(values[i]));
    const role = (r) => `${r.role[0].toUpperCase()}${r.role.slice(1)}`;
    const headers = ['Day', ...sides.flatMap((r) => [{ label: `${role(r)} ${measure.column}`, num: true }, { label: 'sessions', num: true },
      { label: 'affected', num: true }, { label: 'reports', num: true }])];
    const grid = table(headers, data.offsets.map((offset, i) => ({ data: { offset, partial: sides.some((r) => r.partial[i]) },
      cells: [`day ${offset}`, ...sides.flatMap((r) => [cell(r, i), count(r.sessions, i), count(r.affected_sessions, i), count(r.reports, i)])] })),
    (row) => (row.partial ? 'partial' : null));
    grid.setAttribute('data-role', 'overlay-table');
    grid.classList.add('compact');
    const title = `${measure.heading} ${what}`;
    grid.prepend(el('caption', { class: 'sr-only' }, `${title[0].toUpperCase()}${title.slice(1)} by day since the start of each release’s bulk of sessions: the chart’s numbers`));
    overlayChart.hidden = false;
    replace(overlayTable,
      el('p', { class: 'muted' }, sides.map((r, i) => [i ? '; ' : '', `${role(r)}: `, clientText(r.release, 'span', { 'data-role': `overlay-${r.role}` }),
        ` (day 0 ${time(r.aligned_start)}`, r.aligned_start_kept ? el('span', { 'data-role': `day0-kept-${r.role}` }, ', kept') : '', `; first session ${time(r.first_session)}`,
        r.sessions_before_start ? el('span', { 'data-role': `before-start-${r.role}` }, `; ${number(r.sessions_before_start)} sessions and ${number(r.reports_before_start)} reports dated earlier, not drawn`) : null,
        ')']), '.'),
      el('div', { class: 'scroll' }, grid));
  }

  function drawKinds(data) {
    const partial = data.buckets.map((_, i) => (data.partial_buckets ?? []).includes(i));
    kindPartial = partial;
    const series = Object.entries(data[measure.series] ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const labels = data.buckets.map((b) => (bucket === 'day' ? b.slice(0, 10) : b.slice(5, 16).replace('T', ' ')));
    drawChart(kindChart, {
      type: 'line',
      data: { labels, datasets: series.map(([k, values], index) => line(kindName(k), values.map(measure.drawn), partial, color(index))) },
      options: options((_, index) => kindPartial[index], measure.axis),
    });
    const value = (values, i) => (values[i] === null || values[i] === undefined ? '—' : measure.cell(values[i]));
    replace(kindTable, el('div', { class: 'scroll' }, table(['Bucket (UTC)', { label: 'Sessions', num: true }, ...series.map(([k]) => ({ label: `${kindName(k)} ${measure.kindColumn}`, num: true }))],
      labels.map((label, i) => ({ data: { partial: partial[i] }, cells: [partial[i] ? el('span', {}, label, el('span', { class: 'badge partial' }, 'partial')) : label,
        number(data.sessions?.[i]), ...series.map(([, values]) => value(values, i))] })))),
      measure === MEASURES.share && data.rates?.['x-other'] ? el('p', { class: 'muted' }, 'The kinds summed under “other” have no share: a session with two of them would count twice.') : null);
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
