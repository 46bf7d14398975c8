// Releases as the dashboard picks them: API calls always carry a release's opaque `id` from
// /releases (any version and build string round-trips); the label is its display text.
import { api, q } from './api.js';
import { el } from './dom.js';

/** The app's releases, newest first: `[{id, release, version, build, …}]`. */
export async function loadReleases(app) {
  return (await api.get(`/v1/apps/${q(app)}/releases`)).releases;
}

/** The release a URL parameter names: its `id` (what the dashboard writes), or — links made
 * before ids — its exact display text, or a version with a single build. `null` if none. */
export function findRelease(releases, value) {
  if (value === null || value === undefined || value === '') return null;
  const byID = releases.find((r) => r.id === value);
  if (byID) return byID;
  const byText = releases.filter((r) => r.release === value);
  if (byText.length === 1) return byText[0];
  const byVersion = releases.filter((r) => r.version === value);
  return byVersion.length === 1 ? byVersion[0] : null;
}

/** What to send to the API for a URL parameter: the release's id, or (unknown to this list)
 * the text as given, so the server's own error says what is wrong with it. */
export const releaseParam = (releases, value) => findRelease(releases, value)?.id ?? value;

/** A `<select>` of releases: values are ids, labels the display text. `extra` options go first. */
export function releaseSelect(name, releases, selected, onchange, extra = []) {
  const chosen = findRelease(releases, selected);
  const unknown = !chosen && selected && !extra.some(([value]) => value === selected) ? [[selected, `${selected} (no such release)`]] : [];
  // Arrow keys on a closed <select> change its value at once: a keyboard user goes through
  // options without a view load for each; Enter or leaving the picker commits. A pointer
  // choice commits at once.
  let keyed = false;
  const commit = (select) => { keyed = false; if (select.value !== initial) onchange(select.value); };
  const initial = chosen?.id ?? selected ?? '';
  return el('select', { name, 'aria-label': name,
    onkeydown: (event) => { if (event.key === 'Enter') { event.preventDefault(); commit(event.target); } else if (event.key !== 'Tab') keyed = true; },
    onpointerdown: () => { keyed = false; },
    onchange: (event) => { if (!keyed) commit(event.target); },
    onblur: (event) => { if (keyed) commit(event.target); } },
    [...unknown, ...extra].map(([value, label]) => el('option', { value, selected: !chosen && value === (selected ?? '') ? 'selected' : null }, label)),
    releases.map((r) => el('option', { value: r.id, selected: chosen?.id === r.id ? 'selected' : null }, r.release)));
}

/** The display text of a release parameter (the text itself when it names no known release). */
export const releaseLabel = (releases, value) => findRelease(releases, value)?.release ?? value;

/** The default base for a target: the release just before it (the next older one), else any other. */
export function releaseBefore(releases, target) {
  const index = releases.findIndex((r) => r.id === target);
  return (index >= 0 ? releases[index + 1] : null)?.id ?? releases.find((r) => r.id !== target)?.id ?? null;
}
