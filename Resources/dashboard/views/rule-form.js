import { el } from '../dom.js';

/** Every config key a rule's `set` can carry (Sources/WatchdogServer/Config/ConfigSchema.swift,
 * openapi.yaml ConfigRuleValues), with its built-in default. `test_crash_expires_at` is chosen in
 * the change dialog (the guarded path of test_crash), not in the form. */
export const KEYS = [
  { key: 'enabled', type: 'boolean', builtIn: true, label: 'kill switch' },
  { key: 'auto_fix', type: 'boolean', builtIn: false, label: 'fix misplaced views' },
  { key: 'test_crash', type: 'boolean', builtIn: false, label: 'crash on purpose after a reported glitch' },
  { key: 'test_crash_budget', type: 'integer', min: 0, max: 1000, builtIn: 1, label: 'test crashes per install per UTC day' },
  { key: 'watchdog_interval_s', type: 'number', min: 0.1, max: 3600, builtIn: 1, label: 'seconds between checks' },
  { key: 'frame_tolerance_pt', type: 'number', min: 0, max: 1000, builtIn: 1, label: 'points a frame may be off' },
  { key: 'lock_threshold_s', type: 'number', min: 0.1, max: 3600, builtIn: 10, label: 'seconds before a lock is reported' },
  { key: 'report_sample_rate', type: 'number', min: 0, max: 1, builtIn: 1, label: 'share of glitches reported, 0–1' },
  { key: 'attest_percent', type: 'number', min: 0, max: 100, builtIn: 100, label: 'share of installs that attest, 0–100' },
  { key: 'test_crash_expires_at', type: 'timestamp', builtIn: null, label: 'test_crash off after' },
];
const byKey = Object.fromEntries(KEYS.map((k) => [k.key, k]));

/** A key's value where no rule sets it: the app's default, else the built-in one. */
export const baseValue = (document, key) => document?.defaults?.[key] ?? byKey[key]?.builtIn ?? null;

/** "on", "off", "2", "none". */
export const shown = (value) => (value === true ? 'on' : value === false ? 'off' : value === null || value === undefined ? 'none' : String(value));

const list = (text) => text.split(',').map((x) => x.trim()).filter(Boolean);

/** The form that creates or edits a rule: what it matches (versions, builds, channels, idioms,
 * percent) and every key it may set, each "unchanged" (not set by the rule) unless chosen.
 * `submit(made)` gets the rule to save: `rule` as it was — fields, `match` and `set` keys the
 * form does not show included — with the form's fields over it. Returns the form, or an error
 * message through `refuse`. */
export function ruleForm(rule, { label, submit, stop, refuse }) {
  const field = (id, text, input) => el('label', { for: id }, text, ' ', input);
  const input = (id, attributes) => el('input', { id, type: 'text', ...attributes });
  const name = input('rule-name', { maxlength: 128, value: rule?.name ?? '' });
  const versions = input('rule-versions', { placeholder: '>=14.2.0 <15', value: rule?.match?.versions ?? '' });
  const builds = input('rule-builds', { placeholder: '31245', value: (rule?.match?.builds ?? []).join(', ') });
  const channels = input('rule-channels', { placeholder: 'beta, internal', value: (rule?.match?.channels ?? []).join(', ') });
  const idioms = input('rule-idioms', { placeholder: 'phone, pad', value: (rule?.match?.idioms ?? []).join(', ') });
  const percent = el('input', { id: 'rule-percent', type: 'number', min: 0, max: 100, step: 'any', value: rule?.match?.percent ?? 100 });
  const controls = {};
  for (const spec of KEYS.filter((k) => k.type !== 'timestamp')) {
    const id = `rule-set-${spec.key}`;
    const current = rule?.set?.[spec.key];
    controls[spec.key] = spec.type === 'boolean'
      ? el('select', { id, 'data-set-key': spec.key }, [['', 'unchanged'], ['true', 'on'], ['false', 'off']].map(([value, text]) =>
        el('option', { value, selected: current !== undefined && String(current) === value ? 'selected' : null }, text)))
      : el('input', { id, 'data-set-key': spec.key, type: 'number', min: spec.min, max: spec.max, step: spec.type === 'integer' ? 1 : 'any',
        placeholder: `unchanged (${spec.builtIn})`, value: current ?? '' });
  }
  const setting = (spec) => field(`rule-set-${spec.key}`, `Sets ${spec.key}`, controls[spec.key]);
  const booleans = KEYS.filter((k) => k.type === 'boolean');
  const numbers = KEYS.filter((k) => k.type === 'integer' || k.type === 'number');
  const form = el('form', { class: 'inline rule-form', 'aria-labelledby': 'rule-form-title' },
    el('h3', { id: 'rule-form-title' }, rule ? `Edit rule ${label(rule)}` : 'New rule'),
    el('fieldset', {}, el('legend', {}, 'Matches'),
      field('rule-name', 'Name', name), field('rule-versions', 'Versions', versions), field('rule-builds', 'Builds', builds),
      field('rule-channels', 'Channels', channels), field('rule-idioms', 'Idioms', idioms), field('rule-percent', 'Percent', percent)),
    el('fieldset', {}, el('legend', {}, 'Sets (empty or “unchanged”: the rule leaves the key alone)'),
      booleans.map(setting),
      el('p', { class: 'muted' }, 'test_crash on is asked for with its expiry, and the app’s name when it switches many installs; its budget:'),
      numbers.map(setting)),
    el('button', { type: 'submit', class: 'primary' }, rule ? 'Review change' : 'Review new rule'),
    rule ? el('button', { type: 'button', onclick: stop }, 'Stop editing') : null);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    // What the form does not show stays as it was: the rule's other fields, `match` and `set` keys.
    const set = { ...(rule?.set ?? {}) };
    for (const [key, control] of Object.entries(controls)) {
      const spec = byKey[key];
      const text = control.value.trim();
      if (!text) delete set[key];
      else if (spec.type === 'boolean') set[key] = text === 'true';
      else {
        const value = Number(text);
        if (!Number.isFinite(value) || value < spec.min || value > spec.max || (spec.type === 'integer' && !Number.isInteger(value))) {
          refuse(`${key} must be ${spec.type === 'integer' ? 'a whole number' : 'a number'} from ${spec.min} to ${spec.max}.`);
          return;
        }
        set[key] = value;
      }
    }
    if (!Object.keys(set).length) { refuse('A rule must set at least one key: choose on or off, or give a value.'); return; }
    const match = { ...(rule?.match ?? {}), percent: Number(percent.value) };
    const listed = { versions: versions.value.trim() || null, builds: list(builds.value), channels: list(channels.value), idioms: list(idioms.value) };
    for (const [key, value] of Object.entries(listed)) {
      if (value === null || (Array.isArray(value) && !value.length)) delete match[key];
      else match[key] = value;
    }
    const made = { ...(rule ?? {}), match, set };
    if (name.value.trim()) made.name = name.value.trim();
    else delete made.name;
    submit(made);
  });
  return form;
}
