// Chart.js from Debian's libjs-chart.js, served by watchdogd itself (no CDN).
import { Chart, registerables } from '/assets/chart.js/chart.mjs';

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
