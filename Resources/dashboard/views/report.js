import { api, q } from '../api.js';
import { el, replace, svg, clientText } from '../dom.js';
import { time, kindName } from '../format.js';

const finite = (value) => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const frameOf = (frame) => frame && [frame.x, frame.y, frame.width, frame.height].every((v) => finite(v) !== null) ? frame : null;

/** The screen drawn to scale: the window, the keyboard frame, where the view should be and where it was. */
export function drawing(report) {
  const windowFrame = frameOf(report.window) ?? { x: 0, y: 0, width: 390, height: 844 };
  const expected = frameOf(report.view?.expected);
  const actual = frameOf(report.view?.actual);
  const keyboard = report.keyboard?.visible !== false ? frameOf(report.keyboard?.frame) : null;
  const pad = 12;
  const font = Math.max(12, Math.round(windowFrame.height / 45));
  const picture = svg('svg', { class: 'glitch', 'data-role': 'glitch-drawing', role: 'img', viewBox: `${-pad} ${-pad} ${windowFrame.width + 2 * pad} ${windowFrame.height + 2 * pad}`, preserveAspectRatio: 'xMidYMin meet' },
    svg('title', {}, 'The report drawn to scale, in points'),
    svg('rect', { 'data-frame': 'window', x: 0, y: 0, width: windowFrame.width, height: windowFrame.height, fill: '#ffffff', stroke: '#334155', 'stroke-width': 2 }));
  // Each label has its own corner (keyboard bottom left, expected top left, actual top right),
  // so frames that nearly coincide do not print their names over each other.
  const box = (name, frame, fill, stroke, dash, corner) => {
    picture.append(svg('rect', { 'data-frame': name, x: frame.x, y: frame.y, width: frame.width, height: frame.height, fill, 'fill-opacity': 0.6, stroke, 'stroke-width': 2, 'stroke-dasharray': dash ?? 'none' }));
    const right = corner === 'top-right';
    const y = corner === 'bottom-left' ? frame.y + Math.max(frame.height - 6, font + 2) : frame.y + font + 2;
    picture.append(svg('text', { x: right ? frame.x + frame.width - 6 : frame.x + 6, y, 'text-anchor': right ? 'end' : 'start', 'font-size': font, fill: stroke }, name));
  };
  if (keyboard) box('keyboard', keyboard, '#cbd5e1', '#475569', null, 'bottom-left');
  if (expected) box('expected', expected, '#bbf7d0', '#15803d', '6 4', 'top-left');
  if (actual) box('actual', actual, '#fecaca', '#b91c1c', null, 'top-right');
  let delta = null;
  if (expected && actual) {
    const parts = [['x', actual.x - expected.x], ['y', actual.y - expected.y], ['width', actual.width - expected.width], ['height', actual.height - expected.height]]
      .filter(([, d]) => Math.abs(d) > 0.0001).map(([name, d]) => `Δ${name} ${d > 0 ? '+' : ''}${d.toFixed(1)} pt`);
    delta = parts.length ? parts.join(', ') : 'no difference';
  }
  return el('div', {},
    picture,
    el('p', { class: 'legend' },
      el('span', {}, el('i', { class: 'swatch window' }), `window ${windowFrame.width}×${windowFrame.height} pt`),
      keyboard ? el('span', {}, el('i', { class: 'swatch keyboard' }), `keyboard (${report.keyboard?.mode ?? '?'}, ${report.keyboard?.height ?? '?'} pt)`) : null,
      expected ? el('span', {}, el('i', { class: 'swatch expected' }), 'expected frame') : null,
      actual ? el('span', {}, el('i', { class: 'swatch actual' }), 'actual frame') : null),
    delta ? el('p', { class: 'delta', 'data-role': 'delta' }, delta) : null);
}

/** Every field of the report, as text. */
function fields(value, prefix = '') {
  if (value === null || typeof value !== 'object') return [[prefix, String(value)]];
  if (Array.isArray(value)) return value.length ? value.flatMap((item, i) => fields(item, `${prefix}[${i}]`)) : [[prefix, '[]']];
  return Object.entries(value).flatMap(([key, inner]) => fields(inner, prefix ? `${prefix}.${key}` : key));
}

export async function render(main, params, { link }) {
  const id = params.get('id');
  // Ids are unique per app: the app picks the report when two apps used one id.
  const app = params.get('app');
  const item = await api.get(`/v1/reports/${q(id)}${app ? `?app=${q(app)}` : ''}`);
  const report = item.report ?? {};
  const logs = Array.isArray(report.logs) ? report.logs : [];
  replace(main,
    el('p', {}, el('a', { href: link('reports', { fingerprint: item.fingerprint, release: item.release }), 'data-role': 'back' }, '← Back to the reports of this issue')),
    el('h1', {}, kindName(item.kind), ' on ', clientText(report.screen ?? '?'), ' — ', clientText(item.release)),
    el('div', { class: 'row' },
      el('div', { class: 'card' }, drawing(report)),
      el('div', { class: 'card' },
        el('h2', {}, 'Tagged log lines'),
        el('pre', { class: 'logs' }, logs.join('\n') || '(none)'),
        el('h2', {}, 'Fields'),
        el('dl', { class: 'fields' },
          [['received_at', time(item.received_at)], ['fingerprint', item.fingerprint], ['suspect', String(item.suspect)], ['flooded', String(item.flooded ?? false)],
            ...fields(Object.fromEntries(Object.entries(report).filter(([k]) => k !== 'logs')))].map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])))));
  return {};
}
