import { api, q, APIError } from '../api.js';
import { el, replace, shortened } from '../dom.js';
import { drawChart, color, describeChart, chartTable } from '../charts.js';
import { whenChanged } from '../changes.js';
import { ratioSentence, kindName, number } from '../format.js';
import { loadReleases, releaseParam, releaseSelect, releaseLabel, releaseBefore, newestCounted } from '../pickers.js';
import { verdictBadge, sessionsWith, kindSentences, secondary, sides, breakdown, intervalChoice, intervalPicker, intervalNote, installsChoice, installsPicker, installsNote } from '../comparison.js';
import { describeSet } from './cohort.js';

/** Release comparison: base vs target — the change in sessions with a glitch in words, its
 * interval and the verdict; report rates, flooded reports and concentration beside it. */
/** The rules that switch part of either release (`partial_rules`): its figures mix installs with
 * and without the switch, which Config effect splits (issue 44). */
function partialRulesNote(data, { interval, installs }) {
  const rules = data.partial_rules ?? [];
  if (!rules.length) return null;
  return el('p', { class: 'warning', 'data-role': 'partial-rules' }, 'Part of these releases is switched by a rule: ',
    rules.map((r, i) => [i ? '; ' : '', el('a', { href: `#/cohort?app=${encodeURIComponent(data.app)}&release=${encodeURIComponent(r.sides.includes('target') ? data.target.id : data.base.id)}&rule=${encodeURIComponent(r.rule)}&interval=${encodeURIComponent(interval)}&installs=${encodeURIComponent(installs)}` },
      `rule ${r.rule}`), ` (${describeSet(r.set)} for ${r.percent} % of installs) in the ${r.sides.join(' and ')}`,
      r.rollout ? el('span', { 'data-role': 'partial-rollout' }, `, moved by a ${r.rollout.status === 'paused' ? 'paused ' : ''}guarded rollout at step ${r.rollout.step} of ${r.rollout.steps} (${r.rollout.percent} %)`) : null]),
    '. Each side mixes installs with and without it; Config effect compares them.');
}

export async function render(main, params, { go, settle }) {
  const app = params.get('app');
  const releases = await loadReleases(app);
  // API calls carry release ids; a link with display text (made before ids) still resolves.
  // Default: the newest release with counted sessions against the newest older one with sessions
  // (a release just declared or admitted has none yet).
  const target = releaseParam(releases, params.get('target') ?? newestCounted(releases));
  const base = releaseParam(releases, params.get('base') ?? releaseBefore(releases, target));
  const interval = intervalChoice(params);
  const installs = installsChoice(params);
  const reopen = (change) => go('compare', Object.fromEntries(Object.entries({ base, target, interval, installs, ...change }).filter(([, v]) => v)));
  const picker = (name, value) => el('label', {}, `${name} `, releaseSelect(name, releases, value, (chosen) => reopen({ [name]: chosen })));
  const summary = el('div', { class: 'card', id: 'comparison' });
  // Each chart with its numbers in a table under it (its text alternative).
  const chartCard = (by) => {
    const card = { chart: describeChart(el('div', { class: 'chart' }), `Bar chart: % of sessions with a glitch in base and target, by ${by}`), table: el('div', { 'data-role': 'chart-table' }) };
    card.node = el('div', { class: 'card' }, el('h2', {}, `Sessions with a glitch (%), by ${by}`), card.chart, el('details', {}, el('summary', {}, 'Table'), card.table));
    return card;
  };
  const charts = { kind: chartCard('kind'), screen: chartCard('screen'), keyboard_mode: chartCard('keyboard mode') };
  const tables = el('div');
  replace(main, el('h1', {}, 'Compare releases'),
    el('form', { class: 'inline' }, picker('base', base), picker('target', target), intervalPicker(interval, (chosen) => reopen({ interval: chosen })),
      installsPicker(installs, (chosen) => reopen({ installs: chosen }))), summary,
    el('div', { class: 'row' }, charts.kind.node, charts.screen.node, charts.keyboard_mode.node),
    tables);
  settle({ base, target, interval, installs });
  const same = (message) => replace(summary, el('p', { class: 'error', 'data-role': 'same-release' }, message));
  const draw = whenChanged((data) => {
    replace(summary,
      el('p', { class: 'sentence' }, `${data.target.release} against ${data.base.release}: `, ratioSentence(data.overall, sessionsWith(null)), ' ', verdictBadge(data.overall.verdict)),
      intervalNote(data.interval_method),
      installsNote(data.installs),
      partialRulesNote(data, { interval, installs }),
      kindSentences(data.by_kind),
      secondary(data),
      sides(data));
    const none = (v) => v || '(not reported)';
    const bars = (card, rows, label, what) => {
      const labels = rows.map((r) => label(r.value));
      const datasets = [
        // A side with no sessions has no rate: no bar (a 0 % bar would read as "no glitches").
        { label: `Base ${data.base.release}`, backgroundColor: color(7), data: rows.map((r) => (r.base.affected_session_rate == null ? null : r.base.affected_session_rate * 100)) },
        { label: `Target ${data.target.release}`, backgroundColor: color(0), data: rows.map((r) => (r.target.affected_session_rate == null ? null : r.target.affected_session_rate * 100)) },
      ];
      drawChart(card.chart, {
        type: 'bar',
        options: { scales: { y: { beginAtZero: true, title: { display: true, text: '% of sessions with a glitch' } } } },
        data: { labels: labels.map((l) => shortened(l)), datasets: datasets.map((d) => ({ ...d, label: shortened(d.label, 40) })) },
      });
      replace(card.table, chartTable(what, labels, datasets, (v) => (v === null ? 'no sessions' : `${number(v, 1)} %`)));
    };
    bars(charts.kind, data.by_kind, kindName, 'Kind');
    bars(charts.screen, data.by_screen.slice(0, 8), none, 'Screen (the first 8 of the By screen table)');
    bars(charts.keyboard_mode, data.by_keyboard_mode, none, 'Keyboard mode');
    replace(tables,
      el('h2', {}, 'By kind'), breakdown(data.by_kind, kindName, undefined, 'Kind', data.interval_method),
      el('h2', {}, 'By screen'), breakdown(data.by_screen, none, undefined, 'Screen', data.interval_method),
      el('h2', {}, 'By keyboard mode'), breakdown(data.by_keyboard_mode, none, undefined, 'Keyboard mode', data.interval_method),
      el('h2', {}, 'By device idiom (per session on that idiom)'), breakdown(data.by_idiom, none, undefined, 'Idiom', data.interval_method),
      el('p', { class: 'muted' }, '(not reported): reports that did not say their screen, keyboard mode or idiom (older clients, or no keyboard on screen).'));
  });
  async function refresh() {
    if (!base || !target) return replace(summary, 'This app needs two releases to compare.');
    if (base === target) { draw.forget(); return same(`Base and target are the same release (${releaseLabel(releases, base)}): pick two different releases.`); }
    try {
      draw(await api.get(`/v1/apps/${q(app)}/compare?base=${q(base)}&target=${q(target)}&interval=${interval}&installs=${installs}`));
    } catch (error) {
      if (!(error instanceof APIError) || error.code !== 'same_release') throw error;
      draw.forget();
      same(`Base and target are the same release: pick two different releases. (${error.message})`);
    }
  }
  await refresh();
  return { refresh };
}

