import { api, q } from '../api.js';
import { el, replace, table } from '../dom.js';
import { drawChart, color } from '../charts.js';
import { number, percent, ratioSentence, verdictText, kindName } from '../format.js';

/** Release comparison: base vs target, with the ratio in words, its interval and the verdict. */
export async function render(main, params, { link, go, settle }) {
  const app = params.get('app');
  const releases = (await api.get(`/v1/apps/${q(app)}/releases`)).releases.map((r) => r.release);
  const base = params.get('base') ?? releases[1] ?? releases[0];
  const target = params.get('target') ?? releases[0];
  const picker = (name, value) => el('label', {}, `${name} `, el('select', { name, onchange: (e) => go('compare', { base: name === 'base' ? e.target.value : base, target: name === 'target' ? e.target.value : target }) },
    releases.map((r) => el('option', { value: r, selected: r === value ? 'selected' : null }, r))));
  const summary = el('div', { class: 'card', id: 'comparison' });
  const charts = { kind: el('div', { class: 'chart' }), screen: el('div', { class: 'chart' }), keyboard_mode: el('div', { class: 'chart' }) };
  const tables = el('div');
  replace(main, el('h1', {}, 'Compare releases'), el('form', { class: 'inline' }, picker('base', base), picker('target', target)), summary,
    el('div', { class: 'row' },
      el('div', { class: 'card' }, el('h2', {}, 'Reports per 1,000 sessions, by kind'), charts.kind),
      el('div', { class: 'card' }, el('h2', {}, 'By screen'), charts.screen),
      el('div', { class: 'card' }, el('h2', {}, 'By keyboard mode'), charts.keyboard_mode)),
    tables);
  settle({ base, target });
  let last = null;
  async function refresh() {
    if (!base || !target) return replace(summary, 'This app needs two releases to compare.');
    const data = await api.get(`/v1/apps/${q(app)}/compare?base=${q(base)}&target=${q(target)}`);
    const key = JSON.stringify(data);
    if (key === last) return;
    last = key;
    replace(summary,
      el('p', { class: 'sentence' }, `${data.target.release} against ${data.base.release}: `, ratioSentence(data.overall, 'keyboard glitches'), ' ',
        el('span', { class: `verdict ${data.overall.verdict ?? ''}` }, verdictText(data.overall.verdict))),
      el('ul', {}, data.by_kind.map((k) => el('li', { class: 'kind-sentence' }, ratioSentence(k, kindName(k.value)), ' ',
        el('span', { class: `verdict ${k.verdict ?? ''}` }, verdictText(k.verdict))))),
      el('p', { class: 'muted' }, `Glitch-free sessions: ${percent(data.base.glitch_free_session_rate)} → ${percent(data.target.glitch_free_session_rate)}. `,
        `Sessions: ${number(data.base.sessions)} → ${number(data.target.sessions)}. Suspect reports (not counted): ${number(data.base.suspect_reports)} → ${number(data.target.suspect_reports)}.`));
    const bars = (rows, label) => ({
      type: 'bar',
      data: {
        labels: rows.map((r) => label(r.value)),
        datasets: [
          { label: data.base.release, backgroundColor: color(7), data: rows.map((r) => r.base.reports_per_1k_sessions ?? 0) },
          { label: data.target.release, backgroundColor: color(0), data: rows.map((r) => r.target.reports_per_1k_sessions ?? 0) },
        ],
      },
    });
    drawChart(charts.kind, bars(data.by_kind, kindName));
    drawChart(charts.screen, bars(data.by_screen.slice(0, 8), (v) => v || '(none)'));
    drawChart(charts.keyboard_mode, bars(data.by_keyboard_mode, (v) => v || '(none)'));
    const rows = (list, label) => list.map((r) => ({ data: r, cells: [label(r.value), number(r.base.reports), number(r.base.reports_per_1k_sessions, 1),
      number(r.target.reports), number(r.target.reports_per_1k_sessions, 1), r.ratio === null ? '—' : `${r.ratio.toFixed(2)}×`,
      r.interval ? `${r.interval.lower.toFixed(2)}–${r.interval.upper.toFixed(2)}` : '—', verdictText(r.verdict)] }));
    const headers = ['', { label: 'Base', num: true }, { label: '/1k', num: true }, { label: 'Target', num: true }, { label: '/1k', num: true },
      { label: 'Ratio', num: true }, { label: '95 % interval', num: true }, 'Verdict'];
    replace(tables,
      el('h2', {}, 'By screen'), table(headers, rows(data.by_screen, (v) => v || '(none)')),
      el('h2', {}, 'By device idiom (per session on that idiom)'), table(headers, rows(data.by_idiom, (v) => v || '(none)')));
  }
  await refresh();
  return { refresh };
}
