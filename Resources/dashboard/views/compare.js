import { api, q, APIError } from '../api.js';
import { el, replace } from '../dom.js';
import { drawChart, color } from '../charts.js';
import { ratioSentence, kindName } from '../format.js';
import { loadReleases, releaseParam, releaseSelect, releaseLabel, releaseBefore } from '../pickers.js';
import { verdictBadge, sessionsWith, kindSentences, secondary, sides, breakdown } from '../comparison.js';

/** Release comparison: base vs target — the change in sessions with a glitch in words, its
 * interval and the verdict; report rates, flooded reports and concentration beside it. */
export async function render(main, params, { go, settle }) {
  const app = params.get('app');
  const releases = await loadReleases(app);
  // API calls carry release ids; a link with display text (made before ids) still resolves.
  // Default: the newest release against the one before it.
  const target = releaseParam(releases, params.get('target') ?? releases[0]?.id ?? null);
  const base = releaseParam(releases, params.get('base') ?? releaseBefore(releases, target));
  const picker = (name, value) => el('label', {}, `${name} `, releaseSelect(name, releases, value,
    (chosen) => go('compare', { base: name === 'base' ? chosen : base, target: name === 'target' ? chosen : target })));
  const summary = el('div', { class: 'card', id: 'comparison' });
  const charts = { kind: el('div', { class: 'chart' }), screen: el('div', { class: 'chart' }), keyboard_mode: el('div', { class: 'chart' }) };
  const tables = el('div');
  replace(main, el('h1', {}, 'Compare releases'),
    el('form', { class: 'inline' }, picker('base', base), picker('target', target)), summary,
    el('div', { class: 'row' },
      el('div', { class: 'card' }, el('h2', {}, 'Sessions with a glitch (%), by kind'), charts.kind),
      el('div', { class: 'card' }, el('h2', {}, 'Sessions with a glitch (%), by screen'), charts.screen),
      el('div', { class: 'card' }, el('h2', {}, 'Sessions with a glitch (%), by keyboard mode'), charts.keyboard_mode)),
    tables);
  settle({ base, target });
  const same = (message) => replace(summary, el('p', { class: 'error', 'data-role': 'same-release' }, message));
  let last = null;
  async function refresh() {
    if (!base || !target) return replace(summary, 'This app needs two releases to compare.');
    if (base === target) return same(`Base and target are the same release (${releaseLabel(releases, base)}): pick two different releases.`);
    let data;
    try {
      data = await api.get(`/v1/apps/${q(app)}/compare?base=${q(base)}&target=${q(target)}`);
    } catch (error) {
      if (error instanceof APIError && error.code === 'same_release') return same(`Base and target are the same release: pick two different releases. (${error.message})`);
      throw error;
    }
    const key = JSON.stringify(data);
    if (key === last) return;
    last = key;
    replace(summary,
      el('p', { class: 'sentence' }, `${data.target.release} against ${data.base.release}: `, ratioSentence(data.overall, sessionsWith(null)), ' ', verdictBadge(data.overall.verdict)),
      kindSentences(data.by_kind),
      secondary(data),
      sides(data));
    const bars = (rows, label) => ({
      type: 'bar',
      options: { scales: { y: { beginAtZero: true, title: { display: true, text: '% of sessions with a glitch' } } } },
      data: {
        labels: rows.map((r) => label(r.value)),
        datasets: [
          { label: data.base.release, backgroundColor: color(7), data: rows.map((r) => (r.base.affected_session_rate ?? 0) * 100) },
          { label: data.target.release, backgroundColor: color(0), data: rows.map((r) => (r.target.affected_session_rate ?? 0) * 100) },
        ],
      },
    });
    const none = (v) => v || '(not reported)';
    drawChart(charts.kind, bars(data.by_kind, kindName));
    drawChart(charts.screen, bars(data.by_screen.slice(0, 8), none));
    drawChart(charts.keyboard_mode, bars(data.by_keyboard_mode, none));
    replace(tables,
      el('h2', {}, 'By kind'), breakdown(data.by_kind, kindName),
      el('h2', {}, 'By screen'), breakdown(data.by_screen, none, undefined, 'Screen'),
      el('h2', {}, 'By keyboard mode'), breakdown(data.by_keyboard_mode, none, undefined, 'Keyboard mode'),
      el('h2', {}, 'By device idiom (per session on that idiom)'), breakdown(data.by_idiom, none, undefined, 'Idiom'),
      el('p', { class: 'muted' }, '(not reported): reports that did not say their screen, keyboard mode or idiom (older clients, or no keyboard on screen).'));
  }
  await refresh();
  return { refresh };
}
