import { api, q } from '../api.js';
import { el, clientText } from '../dom.js';
import { number } from '../format.js';
import { confirmAction } from '../confirm.js';
import { effectLines, transitions } from './config-dialog.js';

const pct = (value) => `${number(value, value % 1 ? 1 : 0)} %`;
const list = (text) => text.split(',').map((x) => x.trim()).filter(Boolean);

/** What setting rule `ruleID` to `percent` would turn, for whom per release (a dry run of the
 * config): `effect`, "auto_fix off → on for 12 installs of 14.2.0 (1)" as inline nodes, and
 * the documents before (`current`) and after (`preview.document`). */
export async function switchedBy(app, ruleID, percent) {
  const base = `/v1/admin/apps/${q(app)}/config`;
  const { data: current, etag } = await api.getWithETag(base);
  const rules = (current.rules ?? []).map((r) => (r.id === ruleID ? { ...r, match: { ...r.match, percent } } : r));
  const preview = (await api.patch(`${base}?dry_run=true`, { rules }, etag)).data;
  const lines = effectLines(current, preview.document, preview.impact ?? [], 'span');
  return { current, preview, effect: lines.length ? lines.flatMap((line, i) => [i ? '; ' : '', line]) : 'switches no recent install' };
}

/** Starting a guarded rollout of `rule` (POST /v1/admin/apps/{app}/rollouts): its plan in a
 * form, then a confirmation naming the rule, the switch(es) it turns and which way, the steps,
 * and the installs per release the first step switches (a dry run of the config with the rule
 * at that step). `started()` redraws the card; errors go to `message`. A rule that sets
 * test_crash is not rolled out by a guard (the server refuses it): the card says so. */
export function startForm(app, ruleID, { started, message }) {
  const holder = el('div', { 'data-role': 'rollout-start' });
  const field = (id, text, input) => el('label', { for: id }, text, ' ', input);
  const steps = el('input', { id: 'rollout-steps', type: 'text', value: '1, 5, 25, 50, 100', size: 18 });
  const hours = el('input', { id: 'rollout-hours', type: 'number', min: 0, max: 2160, step: 'any', value: 24 });
  const sessions = el('input', { id: 'rollout-sessions', type: 'number', min: 1, step: 1, value: 200 });
  const overall = el('input', { id: 'rollout-overall', type: 'checkbox', checked: 'checked' });
  const kinds = el('input', { id: 'rollout-kinds', type: 'text', placeholder: 'view_frame_mismatch', size: 22 });
  const button = el('button', { type: 'submit', class: 'primary' }, 'Start guarded rollout');
  const form = el('form', { class: 'inline rollout-start', 'aria-labelledby': 'rollout-start-title' },
    el('h3', { id: 'rollout-start-title' }, `Start a guarded rollout of rule ${ruleID}`),
    field('rollout-steps', 'Steps (% of installs)', steps), field('rollout-hours', 'Hours per step at least', hours),
    field('rollout-sessions', 'Sessions per side at least', sessions),
    el('label', { for: 'rollout-overall' }, overall, ' Roll back on a regression of all kinds together'),
    field('rollout-kinds', 'or of these kinds', kinds), button);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    const plan = { rule: ruleID, steps: list(steps.value).map(Number), minimum_hours: Number(hours.value), minimum_sessions: Number(sessions.value),
      guard: { overall: overall.checked, kinds: list(kinds.value) } };
    if (plan.steps.length < 2 || plan.steps.some((s, i) => !(s >= 1 && s <= 100) || (i && s <= plan.steps[i - 1]))) {
      message.textContent = 'Steps must be 2 to 10 percentages from 1 to 100, increasing, e.g. 1, 5, 25, 50, 100.';
      return;
    }
    try {
      // What the first step switches: the config with the rule at that percent, as a dry run.
      const { current, preview, effect } = await switchedBy(app, ruleID, plan.steps[0]);
      const rule = (current.rules ?? []).find((r) => r.id === ruleID);
      if (!rule) { message.textContent = `Rule ${ruleID} is not in the config any more.`; return; }
      const ways = [...transitions(current, preview.document).entries()].map(([key, turns]) => `${key} ${[...turns].join(' or ')}`);
      const guard = [plan.guard.overall ? 'all kinds together' : null, ...plan.guard.kinds].filter(Boolean).join(', ') || 'nothing';
      const go = await confirmAction({
        title: `Start a guarded rollout of rule ${ruleID}?`,
        role: 'rollout-start-confirm', confirm: 'Start rollout', returnTo: button,
        consequence: [el('span', { 'data-role': 'rollout-start-what' }, 'Rule ', clientText(rule.name && rule.name !== ruleID ? `${ruleID} (${rule.name})` : ruleID),
          ` sets ${Object.entries(rule.set).map(([k, v]) => `${k} ${v === true ? 'on' : v === false ? 'off' : `= ${v}`}`).join(', ')}`,
          ways.length ? ` (${ways.join('; ')})` : '', `. Steps: ${pct(rule.match?.percent ?? 100)} now → ${plan.steps.map(pct).join(' → ')}: `,
          `it goes to ${pct(plan.steps[0])} of installs now, as a config version by you, then up a step when a step has lasted ${number(plan.minimum_hours, 1)} hours `,
          `with ${number(plan.minimum_sessions)} sessions on each side and no regression; a regression of ${guard} rolls it back to 0 %. `),
        el('span', { 'data-role': 'rollout-start-impact' }, 'The first step: ', effect, '.')],
      });
      if (!go) return;
      const done = await api.post(`/v1/admin/apps/${q(app)}/rollouts`, plan);
      if (done?.applied === false) message.textContent = `Proposed, not applied: ${done.message}`;
      await started();
    } catch (error) {
      message.textContent = error.message;
    }
  });

  /** Fills the holder: the form, or why the rule cannot be rolled out. */
  async function draw(rule) {
    const crashes = rule && ('test_crash' in (rule.set ?? {}) || 'test_crash_expires_at' in (rule.set ?? {}));
    holder.replaceChildren(crashes
      ? el('p', { class: 'muted', 'data-role': 'rollout-not-allowed' }, `Rule ${ruleID} sets test_crash: crashing installs on purpose is not rolled out by a guard (its budget and expiry bound it); change its percent in Config.`)
      : form);
    return holder;
  }
  return { node: holder, draw };
}
