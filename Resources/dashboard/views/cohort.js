import { api, q, APIError } from '../api.js';
import { el, replace, clientText } from '../dom.js';
import { whenChanged } from '../changes.js';
import { number, percent, ratioSentence, kindName } from '../format.js';
import { loadReleases, releaseParam, releaseSelect, navigatingSelect, option, newestCounted } from '../pickers.js';
import { rolloutCard } from './rollout.js';
import { verdictBadge, sessionsWith, kindSentences, secondary, sides, breakdown, intervalChoice, intervalPicker, intervalNote, installsChoice, installsPicker, installsNote } from '../comparison.js';

const roles = ['Not matched', 'Matched'];

/** "auto_fix on", "test_crash off", "frame_tolerance_pt = 2". */
export function describeSet(set) {
  const parts = Object.entries(set ?? {}).map(([key, value]) => (value === true ? `${key} on` : value === false ? `${key} off` : `${key} = ${JSON.stringify(value)}`));
  return parts.length ? parts.join(', ') : 'the rule';
}

/** The observed split against the rule's percent (`sample_ratio`): a warning on a mismatch,
 * otherwise one muted line with the share and its p-value. */
export function splitNote(split) {
  if (!split) return null;
  if (split.mismatch) {
    return el('p', { class: 'warning', 'data-role': 'sample-ratio-warning' }, 'Sample ratio mismatch: ', split.reason ?? '',
      '. The cohorts no longer stand for the same installs (installs of one that crash before uploading, forged install ids, or a switch that changes how often the app starts), ',
      'so this comparison may not mean what it says; a guarded rollout of this rule does not advance while it lasts.');
  }
  const installs = split.installs ?? {};
  if (installs.p === null || installs.p === undefined) {
    return el('p', { class: 'muted', 'data-role': 'sample-ratio' }, `Split not checked: ${split.reason ?? 'nothing to check'}.`);
  }
  return el('p', { class: 'muted', 'data-role': 'sample-ratio' },
    `Split as configured: ${percent(installs.share)} of the ${number(installs.eligible)} installs the rule picks from were matched (it picks ${percent(split.expected)}; `,
    `chi-square p = ${installs.p < 0.0001 ? installs.p.toExponential(1) : installs.p.toFixed(3)}, a mismatch below 0.001).`);
}

/** The rules a viewer may pick from: `GET /v1/apps/{app}/rules`, else (admins) the config
 * document; `null` when neither answers, and the rule id is typed instead. */
async function loadRules(app, session) {
  // Rules as the config document has them (`match.percent`), or flattened (`percent`).
  const flat = (rules) => (rules ?? []).map((r) => ({ id: r.id, name: r.name, percent: r.percent ?? r.match?.percent ?? null, set: r.set }));
  try {
    return flat((await api.get(`/v1/apps/${q(app)}/rules`)).rules);
  } catch (error) {
    if (!(error instanceof APIError) || error.status === 401) throw error;
  }
  if (session?.role !== 'admin' && session?.role !== 'operator') return null;
  try {
    return flat((await api.get(`/v1/admin/apps/${q(app)}/config`)).rules);
  } catch (error) {
    if (!(error instanceof APIError) || error.status === 401) throw error;
    return null;
  }
}

/** Config effect: one release split into the installs a rule matched and those it did not,
 * compared like two releases (sessions with a glitch, 95 % interval, verdict). */
export async function render(main, params, { go, settle, session }) {
  const app = params.get('app');
  const [releases, rules] = await Promise.all([loadReleases(app), loadRules(app, session)]);
  const release = releaseParam(releases, params.get('release') ?? newestCounted(releases) ?? '');
  const rule = params.get('rule') ?? (rules ?? []).find((r) => r.percent !== null && r.percent !== undefined && r.percent > 0 && r.percent < 100)?.id ?? rules?.[0]?.id ?? '';
  const interval = intervalChoice(params);
  const installs = installsChoice(params);
  const reopen = (change) => go('cohort', Object.fromEntries(Object.entries({ release, rule, interval, installs, ...change }).filter(([, v]) => v)));
  const ruleLabel = (r) => `${r.id}${r.name ? ` — ${r.name}` : ''}${r.percent !== null && r.percent !== undefined ? ` (${r.percent} % of installs)` : ''}: ${describeSet(r.set)}`;
  let rulePicker;
  if (rules && rules.length) {
    const listed = rules.some((r) => r.id === rule);
    rulePicker = el('label', {}, 'Rule ', navigatingSelect({ name: 'rule' }, [
      listed || !rule ? null : option(rule, `${rule} (no such rule)`, true),
      rules.map((r) => option(r.id, ruleLabel(r), r.id === rule))], (chosen) => reopen({ rule: chosen })));
  } else {
    const input = el('input', { name: 'rule', value: rule, size: 24, placeholder: 'rule id', 'aria-label': 'Rule id' });
    rulePicker = el('span', {}, el('label', {}, 'Rule id ', input), ' ',
      el('button', { type: 'button', onclick: () => reopen({ rule: input.value.trim() }) }, 'Compare'));
    input.addEventListener('keydown', (event) => { if (event.key === 'Enter') { event.preventDefault(); reopen({ rule: input.value.trim() }); } });
  }
  const summary = el('div', { class: 'card', id: 'cohort' });
  const tables = el('div');
  // Admins see the rule's guarded rollout, if any, and its controls.
  const rollout = (session?.role === 'admin' || session?.role === 'operator') && rule ? rolloutCard(app, rule) : null;
  replace(main, el('h1', {}, 'Config effect'),
    el('form', { class: 'inline' }, el('label', {}, 'Release ', releaseSelect('release', releases, release, (chosen) => reopen({ release: chosen }))), rulePicker,
      intervalPicker(interval, (chosen) => reopen({ interval: chosen })), installsPicker(installs, (chosen) => reopen({ installs: chosen }))),
    el('p', { class: 'muted', 'data-role': 'cohort-explained' }, 'The cohorts are the installs of this release that the rule matched and those it did not, ',
      'picked by the same salted hash of install_id the config uses — an A/B split you already ran.'),
    summary, rollout?.node, tables);
  settle({ release, rule, interval, installs });
  const draw = whenChanged((data) => {
    const cohort = data.cohort ?? {};
    const effect = describeSet(cohort.set);
    const installs = (cohort.installs_matched ?? 0) + (cohort.installs_not_matched ?? 0);
    const share = installs ? `${percent(cohort.installs_matched / installs)} of installs, ${number(cohort.installs_matched)} of ${number(installs)}` : 'no installs';
    replace(summary,
      el('p', { class: 'sentence' }, `${effect} (rule ${cohort.rule ?? rule} matched ${share}): `, ratioSentence(data.overall, sessionsWith(null)), ' ', verdictBadge(data.overall.verdict)),
      splitNote(cohort.sample_ratio),
      intervalNote(data.interval_method),
      installsNote(data.installs),
      kindSentences(data.by_kind, `${effect}: `),
      el('p', { class: 'muted', 'data-role': 'cohorts' },
        clientText(cohort.release ?? ''), `: target = the ${number(cohort.installs_matched)} installs the rule matched${cohort.percent === null || cohort.percent === undefined ? '' : ` (it picks ${cohort.percent} %)`}, `,
        `base = the ${number(cohort.installs_not_matched)} it did not. Sessions without an install id (in neither): ${number(cohort.sessions_without_install)}.`),
      secondary(data),
      sides(data, roles));
    replace(tables, el('h2', {}, 'By kind'), breakdown(data.by_kind, kindName, roles, 'Kind', data.interval_method));
  });
  async function refresh() {
    if (!release) return replace(summary, 'No releases yet.');
    if (!rule) return replace(summary, el('p', { class: 'muted' }, rules && !rules.length ? 'This app has no config rules: add one that matches a percentage of installs (Config).' : 'Pick a rule.'));
    try {
      draw(await api.get(`/v1/apps/${q(app)}/cohorts?release=${q(release)}&rule=${q(rule)}&interval=${interval}&installs=${installs}`));
    } catch (error) {
      if (!(error instanceof APIError) || (error.status !== 400 && error.status !== 404)) throw error;
      draw.forget();
      replace(tables);
      replace(summary, el('p', { class: 'error', 'data-role': 'cohort-error' }, error.message));
    }
  }
  await Promise.all([refresh(), rollout?.refresh()]);
  return { refresh: () => Promise.all([refresh(), rollout?.refresh()]) };
}
