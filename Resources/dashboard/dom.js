// Building DOM without ever parsing HTML: every string that came from a client (screens,
// view names, logs, attributes, device fields) is inserted as text, never as markup.

/** An element with attributes and children; strings become text nodes. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (!/^[a-z][a-z-]*$/.test(name)) throw new Error(`bad attribute name ${name}`);
    if (name.startsWith('on')) {
      if (typeof value !== 'function') throw new Error(`event attribute ${name} needs a function`);
      node.addEventListener(name.slice(2), value);
    } else if (name === 'class') {
      node.className = value;
      // A box that scrolls sideways (a wide table on a phone) must be reachable by keyboard.
      if (/(^| )scroll( |$)/.test(value) && !attributes.tabindex) node.tabIndex = 0;
    }
    else if (name === 'href') node.setAttribute('href', safeHref(value));
    else node.setAttribute(name, String(value));
  }
  append(node, children);
  return node;
}

/** Appends children: nodes as they are, everything else as text. */
export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replaces a node's children. */
export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** Text a client sent (a screen, view or release name, an attribute key, an issue's title) in a
 * table or a line: one line, cut with "…" by CSS when long, the full value on hover (title) and
 * in the DOM (copy, find, screen readers). The report view shows every field in full. */
export function clientText(text, tag = 'span', attributes = {}) {
  const value = String(text ?? '');
  return el(tag, { ...attributes, class: attributes.class ? `client ${attributes.class}` : 'client', title: value }, value);
}

/** A client string shortened for where CSS cannot cut it (a chart's axis): the table beside
 * the chart has it in full. */
export const shortened = (text, length = 32) => (String(text).length > length ? `${String(text).slice(0, length - 1)}…` : String(text));

/** Only links to the dashboard's own views: a `javascript:` (or any other) URL from data never becomes a link. */
export function safeHref(value) {
  const text = String(value);
  if (text.startsWith('#/')) return text;
  // A CSV download of this server's API (`/v1/apps/{app}/releases.csv?…`): same origin, the
  // app's name encoded as one segment (encodeURIComponent), so it can name no other host.
  return /^\/v1\/apps\/[^/?#\\]+\/[a-z]+\.csv(\?[^#\\]*)?$/.test(text) ? text : '#/';
}

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element; attributes must be numbers or fixed strings chosen by the dashboard. */
export function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

/** A table with a header row and rows of cells (nodes or strings). A header is a string or
 * `{label, num, sort, end}`: `num` aligns the column right, `sort` ("ascending"/"descending")
 * says how the rows are sorted by it (aria-sort), `end` keeps the (last) column in view at the
 * right edge of a table that scrolls sideways — a row's actions, reachable on a phone. */
export function table(headers, rows, rowClass = () => null) {
  const classes = (h) => [h?.num ? 'num' : null, h?.end ? 'end' : null].filter(Boolean).join(' ') || null;
  return el('table', {},
    el('thead', {}, el('tr', {}, headers.map((h) => el('th', { class: classes(h), 'aria-sort': h.sort }, h.label ?? h)))),
    el('tbody', {}, rows.map((row) => el('tr', { class: rowClass(row.data) },
      row.cells.map((cell, i) => el('td', { class: classes(headers[i]) }, cell))))));
}
