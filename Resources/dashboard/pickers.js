// Releases as the dashboard picks them: API calls always carry a release's opaque `id` from
// /releases (any version and build string round-trips); the label is its display text.
import { api, q } from './api.js';
import { el } from './dom.js';

/** The app's releases, newest first: `[{id, release, version, build, …}]`. */
export async function loadReleases(app) {
  return (await api.get(`/v1/apps/${q(app)}/releases?limit=1000`)).releases;
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

/** Makes a `<select>` open another view. Arrow keys on a closed `<select>` change its value at
 * once: a keyboard user goes through the options without a view load for each, and Enter or
 * leaving the picker commits; a pointer choice commits at once. Every navigating picker (app,
 * releases, kind, bucket, rule) goes through here. Handlers are properties, so doing it again
 * to the same select (the app picker at each sign-in) replaces them. */
export function navigating(select, onCommit) {
  let keyed = false;
  let shown = select.value;  // the value the view shows: taken again when the picker gets focus
  const commit = () => {
    keyed = false;
    if (select.value === shown) return;
    shown = select.value;
    onCommit(select.value);
  };
  select.onfocus = () => { if (!keyed) shown = select.value; };
  select.onkeydown = (event) => {
    if (event.key === 'Enter') { event.preventDefault(); commit(); } else if (event.key !== 'Tab') keyed = true;
  };
  select.onpointerdown = () => { keyed = false; };
  select.onchange = () => { if (!keyed) commit(); };
  select.onblur = () => { if (keyed) commit(); };
  return select;
}

/** A new navigating `<select>` (see `navigating`). */
export const navigatingSelect = (attributes, options, onCommit) => navigating(el('select', attributes, options), onCommit);

/** Options with their full text on hover too (a long client string is cut by the picker). */
export const option = (value, label, selected) => el('option', { value, title: label, selected: selected ? 'selected' : null }, label);

/** A `<select>` of releases: values are ids, labels the display text. `extra` options go first. */
export function releaseSelect(name, releases, selected, onchange, extra = []) {
  const chosen = findRelease(releases, selected);
  const unknown = !chosen && selected && !extra.some(([value]) => value === selected) ? [[selected, `${selected} (no such release)`]] : [];
  return navigatingSelect({ name, 'aria-label': name }, [
    [...unknown, ...extra].map(([value, label]) => option(value, label, !chosen && value === (selected ?? ''))),
    releases.map((r) => option(r.id, r.release, chosen?.id === r.id)),
  ], onchange);
}

/** The display text of a release parameter (the text itself when it names no known release). */
export const releaseLabel = (releases, value) => findRelease(releases, value)?.release ?? value;

/** The default base for a target: the release just before it (the next older one), else any other. */
export function releaseBefore(releases, target) {
  const index = releases.findIndex((r) => r.id === target);
  const older = index >= 0 ? releases.slice(index + 1) : [];
  // The newest older release with counted sessions, as the gate's base (one admitted but empty
  // would compare against nothing), else the next one, else any other.
  return (older.find((r) => r.sessions > 0) ?? older[0])?.id ?? releases.find((r) => r.id !== target)?.id ?? null;
}

/** The release a view opens on: the newest listed release with counted sessions (a release
 * just declared or admitted, with none yet, would show "n/a" everywhere), else the newest. */
export function newestCounted(releases) {
  return (releases.find((r) => r.sessions > 0) ?? releases[0])?.id ?? null;
}
