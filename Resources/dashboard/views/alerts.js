import { api, q } from '../api.js';
import { el, replace, table, clientText } from '../dom.js';
import { time, percent } from '../format.js';
import { confirmAction, refocus } from '../confirm.js';

const conditions = [
  ['release_regressed', 'Release regressed against its predecessor'],
  ['new_issue', 'New issue with enough affected sessions'],
  ['test_crashes', 'Test crashes arriving'],
  ['glitch_free_rate_below', 'Glitch-free sessions below a threshold'],
];
/** The parameters each condition takes (the API refuses the others). */
const parameters = {
  release_regressed: ['kind', 'minimum_sessions', 'minimum_installs', 'installs'],
  new_issue: ['minimum_affected_sessions', 'minimum_installs'],
  test_crashes: [],
  glitch_free_rate_below: ['threshold', 'minimum_sessions', 'minimum_installs', 'installs'],
};
const conditionLabel = Object.fromEntries(conditions);

/** The alerts card of the config area (admins only): webhooks with their delivery log and a
 * "Send test" button, alert rules, and forms to add both. Everything a client or admin typed
 * (names, URLs, errors a receiver answered) is inserted as text. */
export async function renderAlerts(holder, app, { admin }) {
  if (!admin) {
    replace(holder, el('div', { class: 'card' }, el('h2', {}, 'Alerts'), el('p', { class: 'muted' }, 'Alert rules and webhooks are managed by admins.')));
    return { refresh: async () => {} };
  }
  const base = `/v1/admin/apps/${q(app)}/alerts`;
  const message = el('p', { class: 'error', role: 'status', 'data-role': 'alerts-message' });
  const secret = el('div', { 'data-role': 'hook-secret' });
  const body = el('div');
  replace(holder, el('div', { class: 'card', 'data-role': 'alerts' }, el('h2', {}, 'Alerts'),
    el('p', { class: 'muted' }, 'Rules are evaluated shortly after new data arrives, on the affected-session verdicts (a flood from one device fires nothing); each fires once per release until it clears. Deliveries are signed (Watchdog-Signature) and retried for 24 hours.'),
    message, secret, body));

  /** Asks before a delete that cannot be undone (`confirmAction`: Cancel has the focus). */
  const confirmDelete = (title, consequence, returnTo) => confirmAction({ title, consequence, confirm: 'Delete', danger: true, role: 'alerts-delete', returnTo });
  async function deleteAfterAsking(event, title, consequence, path) {
    if (!await confirmDelete(title, consequence, event.currentTarget)) return;
    await act(() => api.delete(path));
    // The row is gone with its button: the status line says what happened and takes the focus.
    if (!message.textContent) message.textContent = 'Deleted.';
    refocus(message);
  }

  async function act(perform, done) {
    message.textContent = '';
    message.className = '';
    try {
      const result = await perform();
      await draw();
      if (done) await done(result);
    } catch (error) {
      message.className = 'error';
      message.textContent = error.message;
    }
  }

  /** Polls the delivery log until the test left `pending` (bounded), then redraws. */
  async function awaitTest(queued) {
    for (let i = 0; i < 25; i++) {
      const { deliveries } = await api.get(`${base}/hooks/${q(queued.hook)}/deliveries`);
      const row = deliveries.find((d) => d.alert_id === queued.alert_id);
      if (row && (row.state !== 'pending' || row.attempts > 0)) {
        message.textContent = row.state === 'delivered' ? `Test delivered (HTTP ${row.last_status}, ${row.last_latency_ms} ms).` : `Test not delivered: ${row.last_error ?? row.state}; it is retried.`;
        return draw();
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    message.textContent = 'Test queued; the delivery log shows how it went.';
  }

  function deliveryRows(deliveries) {
    return deliveries.map((d) => ({ data: d, cells: [time(d.created_at), d.event, d.state, String(d.attempts),
      d.last_status === null ? '—' : String(d.last_status), d.last_latency_ms === null ? '—' : `${d.last_latency_ms} ms`, clientText(d.last_error ?? '')] }));
  }

  /** What each hook kind's form shows and sends (docs/api.md, "Hook kinds"). */
  const hookKinds = {
    webhook: { label: 'Webhook (signed JSON)', fields: ['url', 'digest'] },
    teams: { label: 'Microsoft Teams workflow', fields: ['url', 'digest'] },
    pagerduty: { label: 'PagerDuty (Events API v2)', fields: ['url', 'routing_key'] },
    email: { label: 'E-mail', fields: ['recipients', 'digest'] },
  };

  function hookForm() {
    const kind = el('select', { id: 'hook-kind' }, Object.entries(hookKinds).map(([value, k]) => el('option', { value }, k.label)));
    const name = el('input', { id: 'hook-name', type: 'text', maxlength: 128, placeholder: 'release channel' });
    const url = el('input', { id: 'hook-url', type: 'url', maxlength: 2048, placeholder: 'https://hooks.slack.com/services/…' });
    const routingKey = el('input', { id: 'hook-routing-key', type: 'password', maxlength: 32, autocomplete: 'off', placeholder: '32 letters and digits' });
    const recipients = el('input', { id: 'hook-recipients', type: 'text', maxlength: 2000, placeholder: 'oncall@example.com, ios@example.com' });
    const digest = el('input', { id: 'hook-digest', type: 'checkbox' });
    const fields = {
      url: el('label', { for: 'hook-url' }, 'URL ', url),
      routing_key: el('label', { for: 'hook-routing-key' }, 'Routing key ', routingKey),
      recipients: el('label', { for: 'hook-recipients' }, 'Recipients ', recipients),
      digest: el('label', { for: 'hook-digest' }, digest, ' Weekly digest'),
    };
    const show = () => {
      const shown = hookKinds[kind.value].fields;
      for (const [field, label] of Object.entries(fields)) label.hidden = !shown.includes(field);
      // PagerDuty has a default URL; the others need theirs.
      url.required = kind.value === 'webhook' || kind.value === 'teams';
      routingKey.required = kind.value === 'pagerduty';
      recipients.required = kind.value === 'email';
    };
    kind.addEventListener('change', show);
    const form = el('form', { class: 'inline', 'aria-labelledby': 'hook-form-title' },
      el('h3', { id: 'hook-form-title' }, 'New webhook'),
      el('label', { for: 'hook-kind' }, 'Kind ', kind),
      el('label', { for: 'hook-name' }, 'Webhook label ', name), fields.url, fields.routing_key, fields.recipients, fields.digest,
      el('button', { type: 'submit', class: 'primary' }, 'Add webhook'));
    show();
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const shown = hookKinds[kind.value].fields;
      const request = { kind: kind.value, ...(name.value.trim() ? { name: name.value.trim() } : {}) };
      if (shown.includes('url') && url.value.trim()) request.url = url.value.trim();
      if (shown.includes('routing_key')) request.routing_key = routingKey.value.trim();
      if (shown.includes('recipients')) request.recipients = recipients.value.split(',').map((r) => r.trim()).filter((r) => r);
      if (shown.includes('digest') && digest.checked) request.digest = true;
      act(() => api.post(`${base}/hooks`, request), (hook) => {
        routingKey.value = '';
        if (!hook.secret) return;
        replace(secret, el('p', { class: 'notice' }, `Secret of webhook ${hook.name} — shown this once; receivers verify Watchdog-Signature with it: `,
          el('code', { 'data-role': 'secret-value' }, hook.secret)));
      });
    });
    return form;
  }

  function ruleForm(hooks) {
    const field = (id, text, input) => el('label', { for: id, 'data-parameter': id.replace('rule-alert-', '').replaceAll('-', '_') }, text, ' ', input);
    const name = el('input', { id: 'rule-alert-name', type: 'text', maxlength: 128 });
    const condition = el('select', { id: 'rule-alert-condition' }, conditions.map(([value, label]) => el('option', { value }, label)));
    const hook = el('select', { id: 'rule-alert-hook' }, hooks.map((h) => el('option', { value: h.id }, h.name)));
    const kind = el('input', { id: 'rule-alert-kind', type: 'text', placeholder: 'all kinds' });
    const minimumSessions = el('input', { id: 'rule-alert-minimum-sessions', type: 'number', min: 0, step: 1, value: 100 });
    const minimumAffected = el('input', { id: 'rule-alert-minimum-affected-sessions', type: 'number', min: 1, step: 1, value: 5 });
    const minimumInstalls = el('input', { id: 'rule-alert-minimum-installs', type: 'number', min: 0, step: 1, value: 20 });
    const threshold = el('input', { id: 'rule-alert-threshold', type: 'number', min: 0, max: 100, step: 'any', value: 99 });
    const installs = el('select', { id: 'rule-alert-installs' }, el('option', { value: 'all' }, 'every install'),
      el('option', { value: 'attested' }, 'attested installs only (App Attest)'));
    const fields = [field('rule-alert-kind', 'Kind', kind), field('rule-alert-minimum-sessions', 'Minimum sessions', minimumSessions),
      field('rule-alert-minimum-affected-sessions', 'Minimum affected sessions', minimumAffected),
      field('rule-alert-minimum-installs', 'Minimum installs', minimumInstalls), field('rule-alert-threshold', 'Threshold (% glitch-free)', threshold),
      field('rule-alert-installs', 'Sessions of', installs)];
    const show = () => { for (const f of fields) f.hidden = !parameters[condition.value].includes(f.dataset.parameter); };
    condition.addEventListener('change', show);
    show();
    const form = el('form', { class: 'inline', 'aria-labelledby': 'rule-alert-form-title' },
      el('h3', { id: 'rule-alert-form-title' }, 'New alert rule'),
      field('rule-alert-name', 'Rule title', name), field('rule-alert-condition', 'When', condition), field('rule-alert-hook', 'Post to', hook), fields,
      el('button', { type: 'submit', class: 'primary', disabled: hooks.length ? null : 'disabled' }, 'Add rule'));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const taken = parameters[condition.value];
      const rule = { condition: condition.value, hook: hook.value, ...(name.value.trim() ? { name: name.value.trim() } : {}) };
      if (taken.includes('kind') && kind.value.trim()) rule.kind = kind.value.trim();
      if (taken.includes('minimum_sessions')) rule.minimum_sessions = Number(minimumSessions.value);
      if (taken.includes('minimum_affected_sessions')) rule.minimum_affected_sessions = Number(minimumAffected.value);
      if (taken.includes('minimum_installs')) rule.minimum_installs = Number(minimumInstalls.value);
      if (taken.includes('threshold')) rule.threshold = Number(threshold.value) / 100;
      if (taken.includes('installs')) rule.installs = installs.value;
      act(() => api.post(`${base}/rules`, rule));
    });
    return form;
  }

  const describe = (r) => [r.kind ? `kind ${r.kind}` : null, r.minimum_sessions !== null ? `≥ ${r.minimum_sessions} sessions` : null,
    r.minimum_affected_sessions !== null ? `≥ ${r.minimum_affected_sessions} affected sessions` : null,
    r.minimum_installs !== null && r.minimum_installs !== undefined ? `≥ ${r.minimum_installs} installs` : null,
    r.threshold !== null ? `below ${percent(r.threshold)} glitch-free` : null,
    r.installs === 'attested' ? 'attested installs only' : null].filter(Boolean).join(', ') || '—';

  async function draw() {
    const [{ hooks }, { rules }] = await Promise.all([api.get(`${base}/hooks`), api.get(`${base}/rules`)]);
    const hookName = Object.fromEntries(hooks.map((h) => [h.id, h.name]));
    replace(body,
      el('h3', {}, 'Webhooks'),
      hooks.length ? el('div', { class: 'scroll' }, table(['Name', 'Kind', 'URL or recipients', 'Digest', { label: 'Actions' }], hooks.map((h) => ({ data: h, cells: [
        clientText(h.name), hookKinds[h.kind]?.label ?? h.kind, clientText(h.kind === 'email' ? (h.recipients ?? []).join(', ') : h.url), h.digest ? 'weekly' : '—',
        el('span', { class: 'actions' },
          el('button', { type: 'button', 'data-hook-test': h.id, 'aria-label': `Send a test to webhook ${h.name}`,
            onclick: () => act(() => api.post(`${base}/hooks/${q(h.id)}/test`), awaitTest) }, 'Send test'), ' ',
          el('button', { type: 'button', 'aria-label': `Delete webhook ${h.name}`, onclick: (event) => deleteAfterAsking(event, `Delete webhook ${h.name}?`,
            'Its delivery log goes with it, and its secret cannot be shown again: a new webhook gets a new secret.', `${base}/hooks/${q(h.id)}`) }, 'Delete'))] }))))
        : el('p', { class: 'muted' }, 'No webhooks yet.'),
      hooks.map((h) => el('div', { 'data-hook-log': h.id },
        el('h4', {}, 'Deliveries to ', clientText(h.name)),
        h.deliveries.length ? el('div', { class: 'scroll' }, table(['Queued', 'Event', 'State', { label: 'Attempts', num: true }, { label: 'Status', num: true },
          { label: 'Latency', num: true }, 'Last error'], deliveryRows(h.deliveries))) : el('p', { class: 'muted' }, 'Nothing sent yet.'))),
      hookForm(),
      el('h3', {}, 'Rules'),
      rules.length ? el('div', { class: 'scroll' }, table(['Name', 'When', 'Parameters', 'Posts to', 'Firing for', { label: 'Actions' }], rules.map((r) => ({ data: r, cells: [
        clientText(r.name), conditionLabel[r.condition] ?? r.condition, describe(r), clientText(hookName[r.hook] ?? r.hook),
        r.firing.length ? clientText(r.firing.map((f) => f.release).join(', ')) : '—',
        el('button', { type: 'button', 'data-alert-rule-delete': r.id, 'aria-label': `Delete alert rule ${r.name}`, onclick: (event) => deleteAfterAsking(event, `Delete alert rule ${r.name}?`,
          'It stops alerting at once; releases it is firing for are forgotten.', `${base}/rules/${q(r.id)}`) }, 'Delete')] }))))
        : el('p', { class: 'muted' }, 'No alert rules.'),
      ruleForm(hooks));
  }

  await draw();
  return { refresh: async () => { if (!holder.contains(document.activeElement)) await draw(); } };
}
