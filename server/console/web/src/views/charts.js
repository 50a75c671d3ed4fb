// uPlot charts of the overview's history samples.

import uPlot from 'uplot';
import { h } from '../util/dom.js';
import { fmtBytes, fmtNum } from '../util/format.js';

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777'];
const TIERS = ['memory', 'disk', 'redis'];

function tierKeys(samples) {
  const keys = new Set();
  for (const s of samples) for (const k of Object.keys(s.hits_per_second || {})) keys.add(k);
  return [...keys].sort((a, b) => (TIERS.indexOf(a) + 1 || 99) - (TIERS.indexOf(b) + 1 || 99) || a.localeCompare(b));
}

const STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500];
/** Axis steps: binary units for bytes (1 KiB … 500 GiB), 1-2-5 integers for counts. */
const BYTE_INCRS = [1, 1024, 1024 ** 2, 1024 ** 3].flatMap(u => STEPS.map(s => s * u));
const INT_INCRS = [1, 1e3, 1e6].flatMap(u => STEPS.map(s => s * u));

const num = v => (typeof v === 'number' && isFinite(v) ? v : null);
const ms = (s, k) => (s.execute_ms ? num(s.execute_ms[k]) : null);

/** The charts drawn on the overview: name, title, series (label + value of a sample), axis formatter. */
export const CHARTS = [
  { name: 'requests', title: 'Requests / s', series: () => [
    { label: 'requests/s', get: s => num(s.requests_per_second) },
    { label: 'errors/s', get: s => num(s.errors_per_second) }] },
  { name: 'latency', title: 'Execute latency (ms)', series: () => [
    { label: 'p50', get: s => ms(s, 'p50') }, { label: 'p90', get: s => ms(s, 'p90') }, { label: 'p99', get: s => ms(s, 'p99') }] },
  { name: 'compiles', title: 'Compiles and cache hits / s', series: samples => [
    { label: 'compiles/s', get: s => num(s.compiles_per_second) },
    ...tierKeys(samples).map(t => ({ label: `${t} hits/s`, get: s => num((s.hits_per_second || {})[t]) }))] },
  { name: 'executions', title: 'Executions / s', series: () => [
    { label: 'executions/s', get: s => num(s.executions_per_second) }] },
  { name: 'memory', title: 'Resident memory', format: fmtBytes, incrs: BYTE_INCRS, series: () => [
    { label: 'memory', get: s => num(s.memory_bytes) }] },
  { name: 'evictions', title: 'Evictions per interval', incrs: INT_INCRS, series: () => [
    { label: 'evictions', get: s => num(s.evictions) }] },
];

function options(spec, series, width) {
  const fmt = spec.format || (v => fmtNum(v, 3));
  return {
    width, height: 170,
    cursor: { drag: { x: false, y: false } },
    legend: { live: true },
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [
      { stroke: '#64748b', grid: { stroke: '#eef1f5', width: 1 }, ticks: { stroke: '#e2e8f0', width: 1 }, font: '11px system-ui, sans-serif' },
      { stroke: '#64748b', grid: { stroke: '#eef1f5', width: 1 }, ticks: { stroke: '#e2e8f0', width: 1 }, font: '11px system-ui, sans-serif',
        size: spec.format ? 72 : 50, incrs: spec.incrs, values: (u, vals) => vals.map(v => fmt(v)) },
    ],
    series: [{ label: 'time', value: (u, v) => (v === null || v === undefined ? '' : new Date(v * 1000).toLocaleTimeString()) },
      ...series.map((s, i) => ({
        label: s.label, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: false, points: { show: false },
        value: (u, v) => (v === null || v === undefined ? '–' : fmt(v)),
      }))],
  };
}

/** A chart card for spec (one of CHARTS); returns {element, update(samples), destroy()}. */
export function createChart(spec) {
  const plotEl = h('div', { class: 'chart-plot' });
  const empty = h('div', { class: 'chart-empty muted' }, 'no samples yet');
  const element = h('section', { class: 'card chart', 'data-test': 'chart', 'data-chart': spec.name, 'data-points': '0' },
    h('h3', {}, spec.title), plotEl, empty);
  let plot = null, labels = '';
  const width = () => Math.max(200, plotEl.clientWidth || 400);
  const ro = new ResizeObserver(() => { if (plot && plotEl.clientWidth) plot.setSize({ width: width(), height: 170 }); });
  ro.observe(plotEl);
  return {
    element,
    /** Draws the samples (oldest first). */
    update(samples) {
      const series = spec.series(samples);
      const data = [samples.map(s => s.t), ...series.map(s => samples.map(s.get))];
      const key = series.map(s => s.label).join('|');
      if (!plot || key !== labels) {
        if (plot) plot.destroy();
        plot = new uPlot(options(spec, series, width()), data, plotEl);
        labels = key;
      } else {
        plot.setData(data);
      }
      element.setAttribute('data-points', String(samples.length));
      empty.hidden = samples.length > 0;
    },
    /** Frees the chart. */
    destroy() {
      ro.disconnect();
      if (plot) plot.destroy();
    },
  };
}
