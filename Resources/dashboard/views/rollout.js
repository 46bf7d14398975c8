import { api, q, APIError } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { number, percent, time } from '../format.js';
import { confirmAction } from '../confirm.js';
import { startForm, switchedBy } from './rollout-start.js';

const actionWords = { started: 'started', advanced: 'advanced', completed: 'completed', rolled_back: 'rolled back', paused: 'paused', resumed: 'resumed', aborted: 'aborted' };
const statusWords = { active: 'active', paused: 'paused', completed: 'completed', rolled_back: 'rolled back', aborted: 'aborted' };
const decisionWords = { wait: 'wait', advance: 'advance', roll_back: 'roll back', pause: 'pause (a person decides)' };
const pct = (value) => `${number(value, value % 1 ? 1 : 0)} %`;
const ratio = (value) => (value === undefined || value === null ? '—' : `${value.toFixed(2)}×`);
const interval = (v) => (v.lower === undefined ? '—' : `${v.lower.toFixed(2)}–${v.upper === undefined ? '∞' : `${v.upper.toFixed(2)}×`}`);

/** What each control does, for its confirmation. */
const controls = {
  pause: { label: 'Pause', consequence: 'No step is taken — no advance, no rollback — until you resume, however much evidence comes in.' },
  resume: { label: 'Resume', consequence: 'The guard looks again at its next pass and advances or rolls back on the evidence.' },
  advance: { label: 'Advance one step', consequence: 'The rule moves to the next percentage now, as a new config version by you; devices get it at their next poll.' },
  abort: { label: 'Abort', consequence: 'The rule goes back to 0 % of installs, as a new config version by you, and the rollout ends. The rule stays in the config.', danger: true },
};

/** Evidence rows: one per release and watched verdict. */
function evidenceRows(step, evidence) {
  return (evidence ?? []).flatMap((release) => release.verdicts.map((v) => ({
    data: release,
    // What the guard decides on first — verdict, reliability and why, the interval — so they sit
    // in view at 1300 px; the counts after.
    cells: [step, clientText(release.release), v.scope === 'overall' ? 'all kinds' : clientText(v.scope),
      v.verdict ?? 'none', release.reliable ? 'yes' : el('span', { 'data-role': 'unreliable-reasons' }, 'no: ', release.reasons.join('; ')),
      interval(v), ratio(v.ratio),
      release.sample_ratio?.mismatch ? `mismatch: ${percent(release.sample_ratio.installs.share)} of installs matched, ${percent(release.sample_ratio.sessions.share)} of sessions` : 'as configured',
      `${number(release.matched.sessions)} (${number(release.matched.step_sessions)} at step)`,
      `${number(release.unmatched.sessions)} (${number(release.unmatched.step_sessions)} at step)`],
  })));
}

const evidenceHeaders = ['Step', 'Release', 'Verdict on', 'Verdict', 'Reliable', 'Always-valid 95 % interval', { label: 'Ratio', num: true },
  'Split', { label: 'Matched sessions', num: true }, { label: 'Not matched', num: true }];

/** The guarded rollout of one rule (admins): where it stands, its steps with the evidence of
 * each, the guard's latest decision, and pause/resume/advance/abort, each confirmed. */
export function rolloutCard(app, rule) {
  const card = el('div', { class: 'card', 'data-role': 'rollout' });
  const message = el('p', { class: 'error', role: 'status', 'data-role': 'rollout-message' });
  const path = `/v1/admin/apps/${q(app)}/rollouts/${q(rule)}`;
  // After a dialog, focus goes to the redrawn control (or the card's first one, or its state).
  const refocus = (action) => (card.querySelector(`[data-action="${action}"]`) ?? card.querySelector('[data-action]') ?? card.querySelector('h2'))?.focus();
  const start = startForm(app, rule, { started: () => draw().then(() => refocus('pause')), message });
  /** The form that starts a rollout (none yet, or the last one finished). */
  const startable = async () => start.draw(((await api.get(`/v1/admin/apps/${q(app)}/config`)).rules ?? []).find((r) => r.id === rule));

  async function act(action, event, rollout) {
    const control = controls[action];
    const returnTo = event.currentTarget;
    // Advance and abort change the rule's percent: what that turns, for whom per release (a dry run).
    const to = action === 'abort' ? 0 : action === 'advance' ? rollout.plan.steps[rollout.step + 1] : undefined;
    const effect = to === undefined ? null : (await switchedBy(app, rule, to).catch(() => null))?.effect;
    const go = await confirmAction({ title: `${control.label}: rollout of rule ${rule}?`, confirm: control.label,
      consequence: [control.consequence, effect ? [' ', el('span', { 'data-role': 'rollout-effect' }, `${pct(rollout.percent)} → ${pct(to)}: `, effect, '.')] : null],
      danger: control.danger, role: 'rollout-confirm', returnTo });
    if (!go) return;
    try {
      await api.post(`${path}/${action}`);
      message.className = '';
      message.textContent = `${control.label}: done.`;
      await draw();
      refocus(action === 'pause' ? 'resume' : action === 'resume' ? 'pause' : action);
    } catch (error) {
      message.className = 'error';
      message.textContent = error.message;
    }
  }

  async function draw() {
    let rollout;
    try {
      rollout = await api.get(path);
    } catch (error) {
      if (!(error instanceof APIError) || error.status !== 404) throw error;
      return replace(card, el('h2', { tabindex: -1 }, 'Guarded rollout'),
        el('p', { class: 'muted', 'data-role': 'rollout-none' }, `Rule ${rule} has no guarded rollout: start one below (docs/rollouts-and-alerts.md, "Guarded rollouts").`),
        await startable(), message);
    }
    const steps = rollout.plan.steps;
    const finished = ['completed', 'rolled_back', 'aborted'].includes(rollout.status);
    const look = rollout.last_look;
    const buttons = finished ? [] : [rollout.status === 'paused' ? 'resume' : 'pause', 'advance', 'abort']
      .map((action) => el('button', { type: 'button', class: controls[action].danger ? 'danger' : null, 'data-action': action, onclick: (event) => act(action, event, rollout) }, controls[action].label));
    const history = rollout.history.map((e) => ({ data: e, cells: [time(e.at), actionWords[e.action] ?? e.action, pct(e.from_percent), pct(e.to_percent),
      clientText(e.actor), e.config_version === undefined ? '—' : String(e.config_version), clientText(e.reason)] }));
    const evidence = rollout.history.flatMap((e, i) => evidenceRows(`${i + 1}. ${actionWords[e.action] ?? e.action}`, e.evidence))
      .concat(look ? evidenceRows('latest look', look.evidence) : []);
    replace(card, el('h2', { tabindex: -1 }, 'Guarded rollout'),
      el('p', { class: 'sentence', 'data-role': 'rollout-state' },
        `Rule ${rule} is at ${pct(rollout.percent)} of installs (step ${rollout.step + 1} of ${steps.length}: ${steps.map(pct).join(' → ')}); the rollout is `,
        el('strong', { 'data-role': 'rollout-status' }, statusWords[rollout.status] ?? rollout.status), '.'),
      el('p', { class: 'muted', 'data-role': 'rollout-needs' }, `To advance, a step needs ${number(rollout.plan.minimum_hours, 1)} hours and ${number(rollout.plan.minimum_sessions)} sessions on each side since it began, `,
        'a verdict on every watched scope, reliable evidence (unreliable evidence pauses the rollout for a person) and the split the rule asks for (a sample ratio mismatch holds it); ',
        `a regressed verdict on ${[rollout.plan.guard.overall ? 'all kinds' : null, ...rollout.plan.guard.kinds].filter(Boolean).join(', ')} rolls it back once the step has its hours and sessions.`),
      look ? el('p', { 'data-role': 'rollout-decision' }, `The guard's latest look (${time(look.at)}): `, el('strong', {}, decisionWords[look.decision] ?? look.decision), ' — ', clientText(look.reason))
        : el('p', { class: 'muted', 'data-role': 'rollout-decision' }, 'The guard has not looked yet.'),
      buttons.length ? el('p', { class: 'actions', 'data-role': 'rollout-controls' }, buttons.flatMap((b) => [b, ' '])) : null,
      message,
      finished ? await startable() : null,
      el('h3', {}, 'Steps'),
      el('div', { class: 'scroll' }, table(['When', 'Action', { label: 'From', num: true }, { label: 'To', num: true }, 'By', { label: 'Config version', num: true }, 'Why'], history)),
      el('h3', {}, 'Evidence'),
      evidence.length ? el('div', { class: 'scroll' }, table(evidenceHeaders, evidence)) : el('p', { class: 'muted' }, 'No evidence yet: the rule\'s releases have no sessions.'));
  }

  // Not while someone types a plan or answers a dialog: a redraw would take their focus.
  const busy = () => start.node.contains(document.activeElement) || document.querySelector('dialog[open]');
  return { node: card, refresh: () => (busy() ? Promise.resolve() : draw().catch((error) => { message.textContent = error.message; })) };
}
