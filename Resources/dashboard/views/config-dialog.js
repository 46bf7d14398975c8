import { el, replace, table, clientText } from '../dom.js';
import { number, time } from '../format.js';
import { diff } from '../diff.js';
import { KEYS, baseValue, shown } from './rule-form.js';

/** Switching test_crash on for more installs than this needs the app's name typed. */
export const NAME_CHECK_ABOVE = 10;
const expiries = [['1', '1 hour'], ['24', '24 hours'], ['168', '7 days']];
const BUILT_IN_BUDGET = 1;
const pct = (value) => `${number(value, value % 1 ? 1 : 0)} %`;

/** An expiry `hours` from now, as the server takes it. */
export const expiresIn = (hours) => new Date(Date.now() + Number(hours) * 3_600_000).toISOString();

const same = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Per key, the ways a change turns it ("test_crash" → {"off → on"}): from the defaults and
 * from each rule added, removed, or changed in what it sets or matches. */
export function transitions(before, after) {
  const found = new Map();
  const add = (key, from, to) => {
    if (same(from, to)) return;
    if (!found.has(key)) found.set(key, new Set());
    const show = (value) => (key === 'test_crash_expires_at' && value ? time(value) : shown(value));
    found.get(key).add(`${show(from)} → ${show(to)}`);
  };
  for (const { key } of KEYS) add(key, baseValue(before, key), baseValue(after, key));
  const old = new Map((before?.rules ?? []).map((r) => [r.id, r]));
  const now = new Map((after?.rules ?? []).map((r) => [r.id, r]));
  for (const id of new Set([...old.keys(), ...now.keys()])) {
    const was = old.get(id), is = now.get(id);
    for (const key of new Set([...Object.keys(was?.set ?? {}), ...Object.keys(is?.set ?? {})])) {
      const from = was?.set?.[key], to = is?.set?.[key];
      if (!is) add(key, from, baseValue(after, key));
      else if (!was) add(key, baseValue(before, key), to);
      else if (!same(from, to)) add(key, from ?? baseValue(before, key), to ?? baseValue(after, key));
      else if (!same(was.match, is.match) && to !== undefined) {
        // Same value, other installs: a higher percent switches more of them on, a lower one back.
        const up = (is.match?.percent ?? 100) >= (was.match?.percent ?? 100);
        const down = (is.match?.percent ?? 100) <= (was.match?.percent ?? 100);
        const otherMatch = !same({ ...was.match, percent: 0 }, { ...is.match, percent: 0 });
        if (up || otherMatch) add(key, baseValue(after, key), to);
        if (down || otherMatch) add(key, to, baseValue(after, key));
      }
    }
  }
  return found;
}

/** "test_crash off → on for 68 installs of 14.2.0 (1) and 3 of 14.1.0 (2)", one line per key
 * the change turns (issue 44: the switch, the direction, the installs per release). */
export function effectLines(before, after, impact, tag = 'li') {
  const turns = transitions(before, after);
  const keys = new Set([...turns.keys(), ...impact.flatMap((r) => Object.keys(r.keys ?? {}))]);
  return [...keys].map((key) => {
    const releases = impact.filter((r) => r.keys?.[key]);
    const ways = [...(turns.get(key) ?? [])].join(' or ') || 'changes';
    const counts = releases.map((r, i) => [i ? (i === releases.length - 1 ? ' and ' : ', ') : '', `${number(r.keys[key])}${i ? '' : ` install${r.keys[key] === 1 ? '' : 's'}`} of `, clientText(r.release)]);
    return el(tag, { 'data-key': key }, `${key} ${ways} for `, counts.length ? counts : 'no recent installs');
  });
}

/** The guarded rollouts this change ends (their rule removed, or its percent set by hand: the
 * guard aborts them at its next look), or changes under them (the rule's name, what it sets or
 * matches but its percent: the rollout goes on). */
export function rolloutWarnings(rollouts, after, before) {
  return (rollouts ?? []).filter((r) => r.status === 'active' || r.status === 'paused').map((r) => {
    const rule = (after?.rules ?? []).find((x) => x.id === r.rule);
    const name = `${r.rule}${rule?.name && rule.name !== r.rule ? ` (${rule.name})` : ''}`;
    if (!rule || (rule.match?.percent ?? 100) !== r.percent) {
      return el('p', { class: 'warning', 'data-role': 'rollout-ends', 'data-rule': r.rule }, `This ends the guarded rollout of rule ${name} at ${pct(r.percent)}`,
        r.status === 'paused' ? ' once it is resumed' : '', ': ', rule ? `the rule’s percent set by hand (${pct(rule.match?.percent ?? 100)}) ` : 'the rule removed ',
        'means the plan no longer says what the rule does, so the guard ends the rollout at its next look, without a step of its own.');
    }
    const was = (before?.rules ?? []).find((x) => x.id === r.rule);
    if (was && !same(was, rule)) {
      return el('p', { class: 'muted', 'data-role': 'rollout-goes-on', 'data-rule': r.rule }, `The guarded rollout of rule ${name} at ${pct(r.percent)} goes on: its percent is unchanged, `,
        'and its next steps roll out the rule as it is after this change.');
    }
    return null;
  }).filter(Boolean);
}

/** The confirm-first dialog of a config change, in `dialog`: what it turns and for whom per
 * release, the diff, the rollouts it ends, and for test_crash on its budget, expiry and (many
 * installs) the app's name typed. Resolves to false (Cancel, Escape) or to what the dialog's
 * fields add to the change (`test_crash_expires_at`). */
export function confirmChange(dialog, titleID, app, description, preview, { testCrash, keepExpiry, budget, before, diffFrom, effect, rollouts }) {
  return new Promise((resolve) => {
    const impact = preview.impact ?? [];
    const switched = impact.reduce((sum, r) => sum + r.switched, 0);
    const crashing = impact.reduce((sum, r) => sum + (r.keys?.test_crash ?? 0), 0);
    let done = false;
    const expiry = el('select', { id: `${titleID}-expiry` }, [
      keepExpiry ? el('option', { value: 'keep', selected: 'selected' }, `as it is (${time(keepExpiry)})`) : null,
      expiries.map(([hours, label]) => el('option', { value: hours, selected: !keepExpiry && hours === '24' ? 'selected' : null }, label))]);
    const answer = () => (testCrash ? { test_crash_expires_at: expiry.value === 'keep' ? keepExpiry : expiresIn(expiry.value) } : {});
    const finish = (value) => {
      if (done) return;
      done = true;
      if (dialog.open) dialog.close();
      resolve(value);
    };
    const apply = el('button', { type: 'button', class: 'danger', onclick: () => finish(answer()) }, 'Apply');
    const cancel = el('button', { type: 'button', onclick: () => finish(false) }, 'Cancel');
    const typed = el('input', { type: 'text', autocomplete: 'off', id: `${titleID}-name`, spellcheck: 'false' });
    const needsName = testCrash && crashing > NAME_CHECK_ABOVE;
    if (needsName) {
      apply.disabled = true;
      typed.addEventListener('input', () => { apply.disabled = typed.value !== app; });
    }
    const perInstall = budget ?? preview.document?.defaults?.test_crash_budget ?? BUILT_IN_BUDGET;
    const lines = effectLines(before ?? diffFrom, preview.document, impact);
    replace(dialog,
      el('h2', { id: titleID }, description),
      // Which switch, which way, and how many installs of each release (issue 44).
      el('p', { 'data-role': 'impact' }, effect ? `${effect}: ` : '', `this switches ${number(switched)} of the installs seen in the last ${preview.impact_window_days ?? 7} days`,
        impact.length ? ', per release below.' : '.'),
      lines.length ? el('ul', { 'data-role': 'effects' }, lines) : null,
      rolloutWarnings(rollouts, preview.document, before ?? diffFrom),
      impact.length ? el('div', { class: 'scroll' }, table(['Release', { label: 'Recent installs', num: true }, { label: 'Switched', num: true }],
        impact.map((r) => ({ data: r, cells: [clientText(r.release), number(r.recent_installs), number(r.switched)] })))) : el('p', { class: 'muted' }, 'No recent installs recorded.'),
      testCrash ? [
        el('p', { 'data-role': 'budget' }, `Each install crashes at most ${perInstall} test crash${perInstall === 1 ? '' : 'es'} a day (UTC), then stops (test_crash_budget).`),
        el('p', { 'data-role': 'expiry' }, el('label', { for: expiry.id }, 'Expires after '), expiry, ' — test_crash turns itself off then.'),
        needsName ? el('p', {}, el('label', { for: typed.id }, `Type the app's name (${app}) to apply `), typed) : null,
      ] : null,
      diffFrom ? el('div', { 'data-role': 'diff' }, el('h3', {}, 'What this changes'), diff(diffFrom, preview.document)) : null,
      el('p', { class: 'actions' }, cancel, ' ', apply));
    dialog.oncancel = (event) => { event.preventDefault(); finish(false); };  // Escape = Cancel
    dialog.onclose = () => finish(false);
    dialog.showModal();
    cancel.focus();  // a stray Space or Enter must not apply
  });
}
