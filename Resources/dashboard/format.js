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

/** "4.0× fewer view-frame glitches, 95 % interval 3.2–5.1" — or why it cannot be said. */
export function ratioSentence(comparison, what) {
  const { ratio, interval, verdict, reason } = comparison;
  if (!interval) return reason ?? 'no comparison possible';
  if (ratio === null) {
    return `${what} appeared (none in the base release); 95 % interval of the ratio ${interval.lower.toFixed(1)}–${interval.upper.toFixed(1)}×`;
  }
  if (ratio === 0) return `no ${what} any more (95 % interval: at least ${(1 / interval.upper).toFixed(1)}× fewer)`;
  if (ratio < 1) return `${(1 / ratio).toFixed(1)}× fewer ${what}, 95 % interval ${(1 / interval.upper).toFixed(1)}–${(1 / interval.lower).toFixed(1)}`;
  return `${ratio.toFixed(1)}× more ${what}, 95 % interval ${interval.lower.toFixed(1)}–${interval.upper.toFixed(1)}` + (verdict === 'no_change' ? ' (not significant)' : '');
}

export const verdictText = (verdict) => ({ improved: 'improved', regressed: 'regressed', no_change: 'no significant change' })[verdict] ?? 'n/a';
