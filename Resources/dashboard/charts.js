// Chart.js from Debian's libjs-chart.js, served by watchdogd itself (no CDN).
import { Chart, registerables } from '/assets/chart.js/chart.mjs';
import { el, table, clientText } from './dom.js';

Chart.register(...registerables);
Chart.defaults.animation = false;  // 30-second refreshes must not make the page jump

const palette = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];
export const color = (index) => palette[index % palette.length];

const live = new Set();

/** Destroys every chart (the view changed), so a page left open all beta does not pile them up. */
export function disposeCharts() {
  for (const chart of live) chart.destroy();
  live.clear();
}

/** Creates the chart on first use, then updates its data in place (no flicker). */
export function drawChart(holder, config) {
  if (holder.chart) {
    holder.chart.data = config.data;
    holder.chart.update('none');
    return holder.chart;
  }
  const canvas = document.createElement('canvas');
  holder.replaceChildren(canvas);
  holder.chart = new Chart(canvas, { ...config, options: { responsive: true, maintainAspectRatio: false, ...config.options } });
  live.add(holder.chart);
  return holder.chart;
}

/** A chart's text alternative: its holder is an image named by `description`, pointing to the
 * table of the same numbers under it (`chartTable`, or a view's own). */
export function describeChart(holder, description) {
  holder.setAttribute('role', 'img');
  holder.setAttribute('aria-label', `${description}; the same numbers are in the table under it.`);
  return holder;
}

/** The numbers a chart draws as a table: `labels` (full text) down, `datasets` across. */
export function chartTable(first, labels, datasets, format) {
  return el('div', { class: 'scroll' }, table([first, ...datasets.map((d) => ({ label: d.label, num: true }))],
    labels.map((label, i) => ({ data: null, cells: [clientText(label), ...datasets.map((d) => format(d.data[i]))] }))));
}
