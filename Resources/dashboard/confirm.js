import { el } from './dom.js';

/** After a confirmed change redrew the view, puts focus back where the person was: the first of
 * `targets` (elements or selectors, e.g. the redrawn control, then the status line that says what
 * happened) that is on the page. A status line gets `tabindex=-1` so it can hold focus. */
export function refocus(...targets) {
  for (const target of targets) {
    const node = typeof target === 'string' ? document.querySelector(target) : target;
    if (!node?.isConnected) continue;
    if (node.getAttribute('role') === 'status' && !node.hasAttribute('tabindex')) node.tabIndex = -1;
    node.focus();
    return node;
  }
  return null;
}

/** Asks before an action: a modal dialog whose Cancel has the focus (a stray Space or Enter
 * must not act), Escape cancels, and focus goes back to the button that asked. Resolves to
 * whether to go ahead. `role` names the dialog for tests (`data-role`). */
export function confirmAction({ title, consequence, confirm, danger = false, role, returnTo }) {
  return new Promise((resolve) => {
    const titleID = `${role}-title`;
    const dialog = el('dialog', { 'aria-labelledby': titleID, 'data-role': role });
    let answered = false;
    const finish = (go) => {
      if (answered) return;
      answered = true;
      if (dialog.open) dialog.close();
      dialog.remove();
      if (!go) returnTo?.focus();
      resolve(go);
    };
    const cancel = el('button', { type: 'button', onclick: () => finish(false) }, 'Cancel');
    const ok = el('button', { type: 'button', class: danger ? 'danger' : null, onclick: () => finish(true) }, confirm);
    dialog.append(el('h2', { id: titleID }, title), el('p', {}, consequence), el('p', { class: 'actions' }, cancel, ' ', ok));
    dialog.oncancel = (event) => { event.preventDefault(); finish(false); };  // Escape = Cancel
    dialog.onclose = () => finish(false);
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
