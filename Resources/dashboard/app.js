// The dashboard: a view per URL (#/view?app=…&…), so any state can be pasted into a chat.
import { api, APIError } from './api.js';
import { el, replace } from './dom.js';
import * as releases from './views/releases.js';
import * as compare from './views/compare.js';
import * as timeline from './views/timeline.js';
import * as issues from './views/issues.js';
import * as reports from './views/reports.js';
import * as report from './views/report.js';
import * as keyboard from './views/keyboard.js';
import * as config from './views/config.js';
import * as login from './views/login.js';

const views = { releases, compare, timeline, issues, reports, report, keyboard, config };
const navigation = [['releases', 'Releases'], ['compare', 'Compare'], ['timeline', 'Over time'], ['issues', 'Issues'], ['keyboard', 'Keyboard heights'], ['config', 'Config']];
const main = document.getElementById('main');
const status = document.getElementById('status');
let session = null;
let current = null;
let apps = [];

/** The route in the URL: `#/compare?app=…&base=…`. */
export function route() {
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  return { view: views[path] ? path : 'releases', params: new URLSearchParams(query) };
}

/** A link to a view with parameters (the current app is kept). */
export function link(view, params = {}) {
  const query = new URLSearchParams({ app: route().params.get('app') ?? apps[0] ?? '', ...params });
  return `#/${view}?${query}`;
}

export function go(view, params = {}) {
  location.hash = link(view, params).slice(1);
}

export const context = { get session() { return session; }, get apps() { return apps; }, link, go };

async function show() {
  const { view, params } = route();
  if (!params.get('app') && apps.length) {
    params.set('app', apps[0]);
    history.replaceState(null, '', `#/${view}?${params}`);
  }
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.view === view);
  document.getElementById('app-select').value = params.get('app') ?? '';
  main.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  current = { view, params, instance: null };
  try {
    const instance = await views[view].render(main, params, context);
    if (current.view === view) current.instance = instance;
    status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    showError(error);
  }
}

function showError(error) {
  if (error instanceof APIError && error.status === 401) return start();
  replace(main, el('p', { class: 'error' }, error.message));
}

async function refresh() {
  if (document.hidden || !current?.instance?.refresh) return;
  try {
    await current.instance.refresh();
    status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    status.textContent = `Refresh failed: ${error.message}`;
  }
}

async function start() {
  try {
    session = await api.session();
  } catch (error) {
    session = null;
    replace(document.getElementById('who'));
    replace(document.getElementById('nav'));
    return login.render(main, start);
  }
  apps = (await api.get('/v1/apps')).apps.map((a) => a.app);
  const select = document.getElementById('app-select');
  replace(select, apps.map((app) => el('option', { value: app }, app)));
  select.onchange = () => go(route().view, { app: select.value });
  replace(document.getElementById('nav'), navigation.map(([view, label]) => el('a', { href: link(view), 'data-view': view }, label)));
  replace(document.getElementById('who'), `${session.name} (${session.role}) `,
    el('button', { onclick: async () => { await api.logout(); location.hash = ''; start(); } }, 'Sign out'));
  await show();
}

window.addEventListener('hashchange', () => session && show());
setInterval(refresh, 30_000);
start();
