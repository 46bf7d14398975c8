import { el } from './dom.js';

/** Key-level differences between two config documents, as lines (− before, + after). */
export function diff(before, after) {
  const flat = (doc) => Object.fromEntries([...Object.entries(doc?.defaults ?? {}).map(([k, v]) => [`defaults.${k}`, JSON.stringify(v)]),
    ...(doc?.rules ?? []).map((r) => [`rule ${r.id}`, JSON.stringify({ name: r.name, match: r.match, set: r.set })]),
    ...(doc?.rules?.length > 1 ? [['rules, in order', doc.rules.map((r) => r.name || r.id).join(' → ')]] : [])]);
  const a = flat(before), b = flat(after);
  const lines = [];
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (a[key] === b[key]) continue;
    if (a[key] !== undefined) lines.push(el('div', { class: 'diff-del' }, `− ${key}: ${a[key]}`));
    if (b[key] !== undefined) lines.push(el('div', { class: 'diff-add' }, `+ ${key}: ${b[key]}`));
  }
  return lines.length ? el('div', {}, lines) : 'no change';
}
