import { api, q } from '../api.js';
import { el, replace, clientText, table } from '../dom.js';
import { confirmAction } from '../confirm.js';
import { number, percent } from '../format.js';

/** The newest listed releases with sessions that the Require dialog shows. */
const requireReleases = 5;

/** What `require` would refuse, over the last 24 hours (all nodes, `…/attestation/refusals`):
 * the uploads stored without an assertion (kind `would_refuse`), and per listed release with
 * sessions in those hours (the `requireReleases` with the most) the attested share of its
 * counted session starts and the starts without an attested one (their uploads would have been
 * refused). */
async function requireImpact(app, mode) {
  const refusals = await api.get(`/v1/admin/apps/${q(app)}/attestation/refusals`);
  const unasserted = refusals.refusals.filter((r) => r.kind === 'would_refuse').reduce((sum, r) => sum + r.count, 0);
  const lastDay = el('span', { 'data-role': 'require-last-day' },
    `In the last 24 hours ${number(unasserted)} ${unasserted === 1 ? 'upload' : 'uploads'} (requests of reports or sessions) came without an assertion: require would refuse them. `);
  return [lastDay, requireReleasesImpact(refusals.sessions_by_release ?? [], mode)];
}

function requireReleasesImpact(all, mode) {
  const releases = all.filter((r) => r.sessions > 0).slice(0, requireReleases);
  if (!releases.length) return 'No listed release has counted sessions in the last 24 hours.';
  if (mode === 'off') {
    return 'App Attest is off, so no session is attested yet: every upload would be refused until installs attest. Observe first to see the attested share per release.';
  }
  return el('span', { 'data-role': 'require-impact' }, `Attested share of the last 24 hours’ sessions, ${releases.length === 1 ? 'the listed release' : `the ${releases.length} listed releases`} with the most: `,
    releases.map((r, i) => {
      const attested = Math.min(r.attested_sessions ?? 0, r.sessions);
      return [i ? '; ' : '', el('span', { 'data-role': 'require-release', 'data-release': r.id },
        clientText(r.release), ` ${percent(attested / r.sessions)} (${number(attested)} of ${number(r.sessions)} sessions attested), `,
        el('strong', {}, `${number(r.sessions - attested)} unattested`), ' sessions whose uploads would have been refused')];
    }), '.');
}

const modes = [
  ['off', 'Off — assertions are ignored'],
  ['observe', 'Observe — unattested uploads are stored and marked'],
  ['require', 'Require — uploads without a valid assertion are refused'],
];
const environments = [['production', 'Production (TestFlight, App Store)'], ['development', 'Development (Xcode builds)'], ['both', 'Both (Xcode and TestFlight builds side by side)']];

/** The App Attest card of the config area (docs/security.md, "Attested installs"): the app's mode, team
 * id, bundle id and environment; admins change them with a form, and switching to `require`
 * asks first (unattested installs' uploads are refused from then on, and kept on the devices).
 * What the server answers is shown as text. */
export async function renderAttestation(holder, app, { admin }) {
  const path = `/v1/admin/apps/${q(app)}/attestation`;
  const card = el('div', { class: 'card', 'data-role': 'attestation' });
  const message = el('p', { class: 'error', role: 'status', 'data-role': 'attestation-message' });
  holder.append(card);

  function summary(settings) {
    const label = Object.fromEntries(modes)[settings.mode] ?? settings.mode;
    return el('dl', { class: 'fields', 'data-role': 'attestation-settings' },
      el('dt', {}, 'Mode'), el('dd', { 'data-field': 'mode' }, label),
      el('dt', {}, 'App id'), el('dd', { 'data-field': 'app-id' }, settings.team_id ? clientText(`${settings.team_id}.${settings.bundle_id}`) : '—'),
      el('dt', {}, 'Environment'), el('dd', { 'data-field': 'environment' }, Object.fromEntries(environments)[settings.environment] ?? settings.environment));
  }

  /** Refused attestations and uploads of the last 24 hours by code (all nodes; a node adds its
   * counts to the store's once a minute, and this one's are counted at once). */
  function refusals(data) {
    // `would_refuse` (stored under observe without an assertion) is the Require dialog's.
    const rows = (data.refusals ?? []).filter((r) => r.kind !== 'would_refuse');
    const kinds = { attestation: 'Attestation (POST /v1/attest)', upload: 'Upload (reports, sessions)' };
    return el('section', { 'aria-labelledby': 'attestation-refusals-title', 'data-role': 'attestation-refusals' },
      el('h3', { id: 'attestation-refusals-title' }, 'Refused in the last 24 hours'),
      rows.length
        ? el('div', { class: 'scroll' }, table(['Refused', 'Code', { label: 'Count', num: true }],
          rows.map((r) => ({ data: r, cells: [kinds[r.kind] ?? r.kind, el('code', {}, r.code), number(r.count)] }))))
        : el('p', { class: 'muted', 'data-role': 'no-refusals' }, 'No attestation or upload was refused in the last 24 hours.'),
      el('p', { class: 'muted' }, 'Counted per app by every node and stored once a minute; codes as in the API reference (“Attested installs”, rate limits).'));
  }

  function form(settings) {
    const field = (id, text, input) => el('label', { for: id }, text, ' ', input);
    const mode = el('select', { id: 'attestation-mode' }, modes.map(([value, label]) => el('option', { value, selected: value === settings.mode ? 'selected' : null }, label)));
    const team = el('input', { id: 'attestation-team-id', type: 'text', maxlength: 10, autocomplete: 'off', spellcheck: 'false', placeholder: 'ABCDE12345', value: settings.team_id });
    const bundle = el('input', { id: 'attestation-bundle-id', type: 'text', maxlength: 155, autocomplete: 'off', spellcheck: 'false', placeholder: app, value: settings.bundle_id || app });
    const environment = el('select', { id: 'attestation-environment' },
      environments.map(([value, label]) => el('option', { value, selected: value === settings.environment ? 'selected' : null }, label)));
    const save = el('button', { type: 'submit', class: 'primary' }, 'Save attestation settings');
    const element = el('form', { class: 'inline', 'aria-labelledby': 'attestation-form-title' },
      el('h3', { id: 'attestation-form-title' }, 'Change'),
      field('attestation-mode', 'Mode', mode), field('attestation-team-id', 'Team id', team), field('attestation-bundle-id', 'Bundle id', bundle),
      field('attestation-environment', 'Environment', environment), save);
    element.addEventListener('submit', async (event) => {
      event.preventDefault();
      message.textContent = '';
      const next = { mode: mode.value, team_id: team.value.trim(), bundle_id: bundle.value.trim(), environment: environment.value };
      if (next.mode === 'require' && settings.mode !== 'require') {
        let impact;
        try { impact = await requireImpact(app, settings.mode); } catch (error) { impact = `The attested share could not be read (${error.message}).`; }
        const go = await confirmAction({ title: `Require attestation for ${app}?`, role: 'attestation-require', returnTo: save, danger: true, confirm: 'Require',
          consequence: ['Reports and sessions without a valid App Attest assertion will be refused: simulators, old devices and builds without App Attest keep them on the device. ', impact] });
        if (!go) return;
      }
      let answer;
      try {
        answer = (await api.put(path, next)).data;
      } catch (error) {
        message.textContent = error.message;  // the form keeps what was typed, to correct it
        return;
      }
      await draw();
      // Four eyes: `require` may need a second person's approval (the Config view lists it).
      message.textContent = answer?.applied === false ? `Proposed, not applied: ${answer.message}` : 'Saved.';
      card.querySelector('#attestation-mode')?.focus();
    });
    return element;
  }

  async function draw() {
    const [settings, refused] = await Promise.all([api.get(path), api.get(`${path}/refusals`)]);
    replace(card, el('h2', {}, 'Attested installs (App Attest)'),
      el('p', { class: 'muted' }, 'With App Attest, an install is a real Apple device running this app: verdicts, the gate and alerts can rest on attested installs alone. ',
        'The releases table shows the attested share of each release’s sessions while this is on.'),
      summary(settings), refusals(refused), message, admin ? form(settings) : el('p', { class: 'muted' }, 'Admins change these settings.'));
  }

  await draw();
  return { refresh: async () => { if (!card.contains(document.activeElement)) await draw(); } };
}
