// Numbers and sentences.
const kindWords = {
  view_frame_mismatch: 'view-frame glitches',
  input_covered_by_keyboard: 'inputs covered by the keyboard',
  keyboard_without_input: 'keyboards shown without an input',
  interaction_lock: 'interaction locks',
};

export const kindName = (kind) => kindWords[kind] ?? `${kind} reports`;
export const number = (value, digits = 0) => value === null || value === undefined ? '—' : Number(value).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const percent = (value) => value === null || value === undefined ? '—' : `${(value * 100).toFixed(1)} %`;
export const time = (text) => text ? text.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '—';

/** A ratio as text: one decimal, two below 0.1, "∞" past any bound. */
export const times = (value) => !Number.isFinite(value) ? '∞' : value < 0.1 ? value.toFixed(2) : value.toFixed(1);

/** An interval of a ratio; `upper` null means unbounded above. */
export const intervalText = (interval) => !interval ? '—'
  : interval.upper === null || interval.upper === undefined ? `at least ${interval.lower.toFixed(2)}` : `${interval.lower.toFixed(2)}–${interval.upper.toFixed(2)}`;

/** A ratio (target / base) and its interval the way the sentences say them: "3.5× fewer,
 * 2.7–4.4" rather than "0.29×, 0.23–0.37", so tables and sentences read on one scale. */
export function ratioCells(ratio, interval) {
  if (ratio === null || ratio === undefined) return [interval ? 'appeared' : '—', interval ? intervalText(interval) : '—'];
  const lower = interval?.lower ?? 0, upper = interval?.upper ?? null;
  if (ratio === 0) return ['none any more', upper ? `at least ${times(1 / upper)}× fewer` : '—'];
  if (ratio < 1) {
    const range = !interval ? '—' : upper === null ? 'unbounded' : lower > 0 ? `${times(1 / upper)}–${times(1 / lower)}× fewer` : `at least ${times(1 / upper)}× fewer`;
    return [`${times(1 / ratio)}× fewer`, range];
  }
  if (ratio === 1) return ['same', !interval ? '—' : `${times(lower)}–${upper === null ? '∞' : times(upper)}×`];
  return [`${times(ratio)}× more`, !interval ? '—' : upper === null ? `at least ${times(lower)}×` : `${times(lower)}–${times(upper)}× more`];
}

/** "3.1× fewer sessions with keyboard glitches, 95 % interval 2.6–3.7" — or why it cannot be
 * said. `what` names what is counted ("sessions with keyboard glitches"); the ratio and its
 * interval compare the shares of sessions with at least one such glitch (target / base). */
export function ratioSentence(comparison, what) {
  const { ratio, interval, verdict, reason } = comparison;
  if (!interval) return reason ?? 'no comparison possible';
  const named = comparison.interval_method === 'sequential' ? 'always-valid 95 % interval' : '95 % interval';
  const lower = interval.lower ?? 0;
  const upper = interval.upper ?? null;  // null: unbounded
  const notSignificant = verdict === 'no_change' ? ' (not significant)' : '';  // an increase that is noise must not read as one
  if (ratio === null || ratio === undefined) {
    return `${what} appeared (none in the base release); ${named} of the ratio ${upper === null ? `at least ${times(lower)}` : `${times(lower)}–${times(upper)}`}×`;
  }
  if (ratio === 0) return `no ${what} any more` + (upper ? ` (${named}: at least ${times(1 / upper)}× fewer)` : '');
  // An interval that holds 1 allows more and fewer alike: said as both ends, never as "1.1× fewer".
  if (lower < 1 && (upper === null || upper > 1)) {
    const more = upper === null ? 'any number of times more' : `${times(upper)}× more`;
    const fewer = lower > 0 ? `${times(1 / lower)}× fewer` : 'none at all';
    return `between ${more} and ${fewer} ${what}: no change (${named})`;
  }
  if (ratio < 1) {
    const range = upper === null
      ? (lower > 0 ? `of the ratio at least ${times(lower)}× (unbounded above)` : 'unbounded')
      : lower > 0 ? `${times(1 / upper)}–${times(1 / lower)}` : `at least ${times(1 / upper)}`;
    return `${times(1 / ratio)}× fewer ${what}, ${named} ${range}`;
  }
  return `${times(ratio)}× more ${what}, ${named} ${upper === null ? `at least ${times(lower)}` : `${times(lower)}–${times(upper)}`}` + notSignificant;
}

export const verdictText = (verdict) => ({ improved: 'improved', regressed: 'regressed', no_change: 'no significant change', unreliable: 'unreliable' })[verdict] ?? 'n/a';
