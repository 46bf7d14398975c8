// What Compare and Config effect both show: the affected-session comparison in words, each
// side's sessions, reports, flooded reports and concentration, and a table per breakdown.
import { navigatingSelect, option } from './pickers.js';
import { el, table, clientText } from './dom.js';
import { number, percent, ratioSentence, verdictText, ratioCells, kindName } from './format.js';

/** A share of reports from the top installs at or above which the comparison warns of a flood. */
export const floodShare = 0.5;

export const verdictBadge = (verdict) => el('span', { class: `verdict ${verdict ?? ''}` }, verdictText(verdict));

/** `what` for a kind: "sessions with view-frame glitches". */
export const sessionsWith = (kind) => `sessions with ${kind ? kindName(kind) : 'keyboard glitches'}`;

/** "top 1 % of installs (2) sent 84.0 % of reports". */
export function concentrationText(concentration) {
  if (!concentration || concentration.top_installs_report_share === null || concentration.top_installs_report_share === undefined) {
    return 'no reports with an install id';
  }
  return `top 1 % of installs (${number(concentration.top_installs)} of ${number(concentration.installs)}) sent ${percent(concentration.top_installs_report_share)} of reports`;
}

export const flooded = (concentration) => (concentration?.top_installs_report_share ?? 0) >= floodShare;

/** One line per kind: "2.1× fewer sessions with view-frame glitches, … [improved]". */
export function kindSentences(byKind, prefix = '') {
  const capital = (text) => (prefix ? text : text.charAt(0).toUpperCase() + text.slice(1));
  return el('ul', {}, byKind.filter((k) => !k.other_values).map((k) => el('li', { class: 'kind-sentence' }, prefix, capital(ratioSentence(k, sessionsWith(k.value))), ' ', verdictBadge(k.verdict))));
}

/** The secondary figures under the headline: affected-session rates, report rates, glitch-free sessions. */
export function secondary(data) {
  const { base, target, report_rate_ratio: reportRatio } = data.overall;
  return [
    el('p', { class: 'muted', 'data-role': 'affected-rates' },
      `Sessions with a glitch: ${percent(base.affected_session_rate)} (${number(base.affected_sessions)} of ${number(base.sessions)}) → `,
      `${percent(target.affected_session_rate)} (${number(target.affected_sessions)} of ${number(target.sessions)}). `,
      `Glitch-free sessions: ${percent(data.base.glitch_free_session_rate)} → ${percent(data.target.glitch_free_session_rate)}.`),
    el('p', { class: 'muted', 'data-role': 'report-rates' },
      `Secondary: reports per 1,000 sessions ${number(base.reports_per_1k_sessions, 1)} → ${number(target.reports_per_1k_sessions, 1)}`,
      reportRatio === null || reportRatio === undefined ? '' : ` (${reportRatio.toFixed(2)}×)`,
      ' — reports cluster in sessions and installs, so the verdict counts sessions.'),
  ];
}

/** Who sent a side's counted session starts: "top 1 % of installs 2 %, largest network 3 %, busiest hour 4 %". */
export function sessionConcentrationText(concentration) {
  if (!concentration || !concentration.sessions) return 'no counted sessions';
  const parts = [`top 1 % of installs (${number(concentration.top_installs)} of ${number(concentration.installs)}) ${percent(concentration.top_installs_share)}`];
  if (concentration.top_network_share !== null && concentration.top_network_share !== undefined) {
    parts.push(`largest of ${number(concentration.networks)} networks ${percent(concentration.top_network_share)}`);
  }
  parts.push(`busiest hour ${percent(concentration.busiest_hour_share)}`);
  return parts.join(', ') + ' of sessions';
}

/** Why the verdicts read "unreliable": the sessions behind them are too concentrated (client-made data cannot be trusted alone). */
export function reliabilityWarning(data) {
  const reasons = data.reliability?.reasons ?? [];
  if (!reasons.length) return null;
  return el('p', { class: 'warning', 'data-role': 'unreliable-warning' },
    '⚠ Unreliable: ', reasons.map((r) => r.message).join('; '),
    '. Improved or regressed verdicts are not given on sessions this concentrated: they may come from one device, network or burst (the ingest key is public).');
}

/** Base and target side by side: sessions, reports, what is counted apart, and how concentrated the reports and the sessions are. */
export function sides(data, roles = ['Base', 'Target']) {
  const sessionSides = data.session_concentration ?? {};
  // Sessions and how concentrated they are first (what the verdict rests on), reports after.
  const side = (role, summary, overall, key) => ({ data: summary, cells: [role, clientText(summary.release), number(summary.sessions),
    number(overall.affected_sessions), percent(overall.affected_session_rate),
    el('span', { 'data-role': 'session-concentration' }, sessionConcentrationText(sessionSides[key])),
    el('span', { class: flooded(summary.concentration) ? 'warn' : null, 'data-role': 'concentration' }, concentrationText(summary.concentration)),
    number(summary.reports), number(overall.reports_per_1k_sessions, 1), number(summary.flooded_reports), number(summary.suspect_reports)] });
  const warnings = [[roles[0], data.base], [roles[1], data.target]].filter(([, summary]) => flooded(summary.concentration)).map(([, summary]) =>
    el('p', { class: 'warning', 'data-role': 'flood-warning' },
      '⚠ ', clientText(summary.release), `: the ${concentrationText(summary.concentration)} — a few devices flood the report counts. `,
      'The verdict counts sessions with a glitch, so they cannot tip it.'));
  return [
    el('div', { class: 'scroll sides' }, table(['Side', 'Release', { label: 'Sessions', num: true }, { label: 'With a glitch', num: true }, { label: 'Rate', num: true },
      'Session concentration', 'Report concentration',
      { label: 'Reports', num: true }, { label: '/1k sessions', num: true }, { label: 'Flooded (not counted)', num: true }, { label: 'Suspect (not counted)', num: true }],
    [side(roles[0], data.base, data.overall.base, 'base'), side(roles[1], data.target, data.overall.target, 'target')])),
    reliabilityWarning(data),
    warnings,
  ];
}

/** The row summing the values past the answer's cut (and those folded at ingest): "other (N values folded)". */
const otherLabel = (r) => el('span', { class: 'badge suspect', 'data-role': 'other-values' }, `other (${number(r.other_values)} ${r.other_values === 1 ? 'value' : 'values'} folded)`);

/** The interval's name in a column header: every view says which one its verdicts read. */
export const intervalName = (method) => (method === 'sequential' ? 'Always-valid 95 % interval' : method === 'fixed' ? 'Fixed 95 % interval' : '95 % interval');

/** A breakdown (by kind, screen, keyboard mode, idiom) as a table: the change, its interval and
 * verdict first (inside 1,300 px), then the affected sessions, report rates last. */
export function breakdown(list, label, roles = ['Base', 'Target'], what = 'Kind', method = undefined) {
  const headers = [what, { label: `Change (${roles[1]} vs ${roles[0]})`, num: true }, { label: intervalName(method), num: true }, 'Verdict',
    { label: `${roles[0]}: sessions with`, num: true }, { label: 'rate', num: true }, { label: `${roles[1]}: sessions with`, num: true }, { label: 'rate', num: true },
    { label: 'Reports / 1k sessions', num: true }];
  const floodedNote = (r) => (r.base.flooded_reports || r.target.flooded_reports) ? ` (flooded ${number(r.base.flooded_reports)} → ${number(r.target.flooded_reports)})` : '';
  return el('div', { class: 'scroll' }, table(headers, list.map((r) => ({ data: r, cells: [r.other_values ? otherLabel(r) : clientText(label(r.value)),
    ...ratioCells(r.ratio, r.interval), verdictBadge(r.verdict),
    number(r.base.affected_sessions), percent(r.base.affected_session_rate), number(r.target.affected_sessions), percent(r.target.affected_session_rate),
    `${number(r.base.reports_per_1k_sessions, 1)} → ${number(r.target.reports_per_1k_sessions, 1)}${floodedNote(r)}`] }))));
}

/** The interval a comparison view asks for: a dashboard is looked at again and again, so by
 * default its verdicts read the always-valid interval, which stays right however often; the
 * fixed one (`interval=fixed`) is for a single planned look. */
export const intervalChoice = (params) => (params.get('interval') === 'fixed' ? 'fixed' : 'sequential');

/** The picker between the two intervals. */
export const intervalPicker = (interval, onCommit) => el('label', {}, 'interval ', navigatingSelect({ name: 'interval', 'aria-label': 'interval' }, [
  option('sequential', 'always valid (any number of looks)', interval === 'sequential'),
  option('fixed', 'fixed (one planned look)', interval === 'fixed'),
], onCommit));

/** Which interval the verdicts on the page read, in words. */
export const intervalNote = (method) => el('p', { class: 'muted', 'data-role': 'interval-method' }, method === 'sequential'
  ? 'Verdicts use the always-valid 95 % interval (sequential): it stays right however often this page is looked at, so acting on the first "regressed" is wrong at most 5 % of the time. It is wider than the fixed one.'
  : 'Verdicts use the fixed-sample 95 % interval: right for one look planned in advance; looked at every day, it calls a difference that is not there far more often than 5 % of the time.');

/** Which installs a comparison counts (`installs=` of the URL): every install (the default), or
 * only the attested ones (App Attest). */
export const installsChoice = (params) => (params.get('installs') === 'attested' ? 'attested' : 'all');

/** The picker between every install and the attested installs. */
export const installsPicker = (installs, onCommit) => el('label', {}, 'installs ', navigatingSelect({ name: 'installs', 'aria-label': 'installs' }, [
  option('all', 'every install', installs !== 'attested'),
  option('attested', 'attested installs only (App Attest)', installs === 'attested'),
], onCommit));

/** Which installs the figures on the page count, in words (what the server answered). */
export const installsNote = (installs) => el('p', { class: 'muted', 'data-role': 'installs-shown' }, installs === 'attested'
  ? 'Shown: attested installs only — the sessions whose start carried a valid App Attest assertion of the install’s own key. Installs never attested, and sessions without an install id, are left out; screen, keyboard-mode and idiom breakdowns are not kept per install.'
  : 'Shown: every install, attested or not.');
