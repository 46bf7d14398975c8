import { api, q } from '../api.js';
import { el, replace, clientText } from '../dom.js';
import { time, number } from '../format.js';
import { confirmAction } from '../confirm.js';
import { whenChanged } from '../changes.js';
import { diff } from '../diff.js';

/** The app's pending changes under four eyes (README, "Four eyes"): each with who proposed
 * it, until when it can be approved, and its diff — the config document it would save against
 * the current one, or the request's body — with Approve and Refuse buttons for operators and
 * admins, each asked first. What the server answers (the proposer's own approval refused, a
 * change that needs an admin) is shown as text. Nothing is drawn when nothing is pending. */
export async function renderProposals(holder, app, { session, current }) {
  const path = `/v1/admin/apps/${q(app)}/proposals`;
  const decides = session?.role === 'admin' || session?.role === 'operator';
  const card = el('div', { class: 'card', 'data-role': 'proposals' });
  const message = el('p', { class: 'error', role: 'status', 'data-role': 'proposals-message', tabindex: '-1' });
  holder.append(card);

  function what(p, document) {
    const before = document;
    const after = p.impact?.document;
    if (after) {
      const switched = (p.impact.impact ?? []).reduce((sum, r) => sum + r.switched, 0);
      return [el('div', { 'data-role': 'diff' }, diff(before, after)),
        el('p', { class: 'muted' }, `Switches ${number(switched)} of the installs seen in the last ${p.impact.impact_window_days ?? 7} days.`)];
    }
    return [p.body === null ? null : el('pre', { 'data-role': 'diff' }, JSON.stringify(p.body, null, 2)),
      p.impact?.summary ? el('p', { class: 'muted' }, p.impact.summary) : null];
  }

  async function decide(p, verb, button) {
    message.textContent = '';
    const approve = verb === 'approve';
    const go = await confirmAction({
      title: `${approve ? 'Approve' : 'Refuse'} ${p.action} by ${p.proposer}?`, role: `proposal-${verb}`, returnTo: button, danger: approve,
      confirm: approve ? 'Approve and apply' : 'Refuse',
      consequence: approve ? 'The change is applied now, as proposed, under your name as its approver.' : 'The change is never applied; its proposer can propose it again.' });
    if (!go) return;
    try {
      await api.post(`${path}/${q(p.id)}/${verb}`);
      message.textContent = approve ? 'Approved and applied.' : 'Refused.';
    } catch (error) {
      message.textContent = error.message;
    }
    draw.forget();
    await refresh();
    message.focus();
  }

  const draw = whenChanged((pending, document) => {
    if (!pending.length) return replace(card, el('h2', {}, 'Pending changes'), message, el('p', { class: 'muted', 'data-role': 'no-proposals' },
      'No change is waiting for approval.'));
    replace(card, el('h2', {}, 'Pending changes'),
      el('p', { class: 'muted' }, 'These changes need a second person: another operator or admin (an admin for attestation) applies one by approving it.'),
      message,
      pending.map((p) => {
        const item = el('div', { class: 'proposal', 'data-role': 'proposal', 'data-id': p.id });
        const buttons = decides ? el('p', { class: 'actions' },
          el('button', { type: 'button', onclick: (event) => decide(p, 'refuse', event.currentTarget) }, `Refuse ${p.id}`), ' ',
          el('button', { type: 'button', class: 'primary', onclick: (event) => decide(p, 'approve', event.currentTarget) }, `Approve ${p.id}`)) : null;
        return replace(item, el('h3', {}, `${p.action} `, el('small', { class: 'muted' }, p.kinds.join(', '))),
          el('p', {}, 'Proposed by ', clientText(p.proposer), ` at ${time(p.created_at)}; expires ${time(p.expires_at)}.`),
          what(p, document), buttons);
      }));
  });

  async function refresh() {
    const pending = (await api.get(`${path}?status=pending`)).proposals;
    draw(pending, pending.some((p) => p.impact?.document) ? await current() : null);
  }

  await refresh();
  return { refresh: async () => { if (!card.contains(document.activeElement)) await refresh(); } };
}
