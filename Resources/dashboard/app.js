// The dashboard: a view per URL (#/view?app=…&…), so any state can be pasted into a chat.
import { api, APIError } from './api.js';
import { el, replace } from './dom.js';
import { disposeCharts } from './charts.js';
import { navigating } from './pickers.js';
import * as releases from './views/releases.js';
import * as compare from './views/compare.js';
import * as timeline from './views/timeline.js';
import * as issues from './views/issues.js';
import * as reports from './views/reports.js';
import * as report from './views/report.js';
import * as keyboard from './views/keyboard.js';
import * as config from './views/config.js';
import * as cohort from './views/cohort.js';
import * as signIn from './views/sign-in.js';
import * as audit from './views/audit.js';

const views = { releases, compare, timeline, issues, reports, report, keyboard, cohort, config, audit };
const navigation = [['releases', 'Releases'], ['compare', 'Compare'], ['timeline', 'Over time'], ['issues', 'Issues'], ['keyboard', 'Keyboard heights'],
  ['cohort', 'Config effect'], ['config', 'Config']];
const main = document.getElementById('main');
const status = document.getElementById('status');
let session = null;
let current = null;
let apps = [];

/** The route in the URL: `#/compare?app=…&base=…`. */
export function route() {
  const hash = location.hash.replace(/^#\/?/, '');
  const mark = hash.indexOf('?');  // the first one: a value may hold another (encoded or not)
  const [path, query] = mark < 0 ? [hash, ''] : [hash.slice(0, mark), hash.slice(mark + 1)];
  return { view: Object.hasOwn(views, path) ? path : 'releases', params: new URLSearchParams(query) };
}

/** A link to a view with parameters (the current app is kept). */
export function link(view, params = {}) {
  const query = new URLSearchParams({ app: route().params.get('app') ?? apps[0] ?? '', ...params });
  return `#/${view}?${query}`;
}

export function go(view, params = {}) {
  location.hash = link(view, params).slice(1);
}

/** Writes parameters a view chose by default (base, target, release) into the URL, so a
 * pasted link keeps meaning the same releases after new ones arrive. */
export function settle(params) {
  const { view, params: now } = route();
  for (const [key, value] of Object.entries(params)) if (value) now.set(key, value);
  history.replaceState(null, '', `#/${view}?${now}`);
}

export const context = { get session() { return session; }, get apps() { return apps; }, link, go, settle };

async function show() {
  const { view, params } = route();
  if (!params.get('app') && apps.length) {
    params.set('app', apps[0]);
    history.replaceState(null, '', `#/${view}?${params}`);
  }
  // Reports and a report belong to the issues: the nav says where the user is.
  const section = { reports: 'issues', report: 'issues' }[view] ?? view;
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('active', a.dataset.view === section);
    if (a.dataset.view === section) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  // A picker that navigated keeps the focus in the new view (not dropped to <body>).
  const focused = document.activeElement;
  const refocus = main.contains(focused) && focused.name ? `[name="${CSS.escape(focused.name)}"]` : null;
  document.getElementById('app-select').value = params.get('app') ?? '';
  disposeCharts();
  main.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  const mine = { view, params, instance: null };
  current = mine;
  // Each view renders into its own container, swapped in only if the user has not moved on.
  const container = el('div');
  try {
    const instance = await views[view].render(container, params, context);
    if (current !== mine) return;
    mine.instance = instance;
    main.replaceChildren(container);
    const heading = container.querySelector('h1');
    document.title = heading ? `${heading.textContent} · watchdogd` : 'watchdogd';
    announce(heading?.textContent ?? '');
    if (refocus) container.querySelector(refocus)?.focus();
    status.textContent = `Updated ${utcTime()}`;
  } catch (error) {
    if (current === mine) showError(error);
  }
}

/** The time of day in UTC, like every table's times. */
const utcTime = () => `${new Date().toISOString().slice(11, 19)} UTC`;

/** Says the new view's title to screen readers (the page does not reload). */
function announce(text) {
  document.getElementById('announcer').textContent = text;
}

function showError(error) {
  if (error instanceof APIError && error.status === 401) return start();
  replace(main, el('p', { class: 'error' }, error.message));
}

async function refresh() {
  if (document.hidden || !current?.instance?.refresh) return;
  try {
    await current.instance.refresh();
    status.textContent = `Updated ${utcTime()}`;
  } catch (error) {
    if (error instanceof APIError && error.status === 401) return start();
    status.textContent = `Refresh failed: ${error.message}`;
  }
}

async function start() {
  try {
    session = await api.session();
  } catch (error) {
    session = null;
    current = null;
    replace(document.getElementById('who'));
    replace(document.getElementById('nav'));
    document.getElementById('app-label').hidden = true;
    status.textContent = '';
    document.title = 'Sign in · watchdogd';
    return signIn.render(main, start);
  }
  document.getElementById('app-label').hidden = false;
  apps = (await api.get('/v1/apps')).apps.map((a) => a.app);
  const select = document.getElementById('app-select');
  replace(select, apps.map((app) => el('option', { value: app }, app)));
  navigating(select, (app) => go(route().view, { app }));
  // The audit log is for admins (the API refuses anyone else).
  const shown = session.role === 'admin' ? [...navigation, ['audit', 'Audit']] : navigation;
  replace(document.getElementById('nav'), shown.map(([view, label]) => el('a', { href: link(view), 'data-view': view }, label)));
  replace(document.getElementById('who'), `${session.name} (${session.role}) `,
    el('button', { onclick: async () => { await api.logout(); location.hash = ''; start(); } }, 'Sign out'));
  await show();
}

document.getElementById('skip').addEventListener('click', (event) => {
  event.preventDefault();  // the hash is the route: moving focus is all a skip link does here
  main.tabIndex = -1;
  main.focus();
});
window.addEventListener('hashchange', () => session && show());
setInterval(refresh, 30_000);
start();
