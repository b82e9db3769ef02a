/** The overview's chart of cost and tokens per day (uPlot, drawn on a canvas). */
import { html } from './html.js';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

/** Cost (left axis) and tokens (right axis) over the given days. */
export function UsageChart({ days }) {
  const box = useRef(null);
  useEffect(() => {
    const xs = days.map((d) => Date.parse(`${d.day}T12:00:00Z`) / 1000);
    const width = Math.max(320, Math.min(900, box.current.clientWidth || 700));
    const plot = new uPlot(
      {
        width,
        height: 220,
        // From zero up, and a cent at least: an idle bot's chart is flat at the bottom, not a made-up range.
        scales: { usd: { range: (_, __, max) => [0, Math.max(0.01, max)] }, tokens: { range: (_, __, max) => [0, Math.max(10, max)] } },
        series: [
          {},
          { label: 'Cost ($)', stroke: '#c2410c', width: 2, scale: 'usd', value: (_, v) => (v == null ? '' : `$${v.toFixed(4)}`) },
          { label: 'Tokens', stroke: '#2563eb', width: 2, scale: 'tokens' },
        ],
        axes: [{}, { scale: 'usd', values: (_, ticks) => ticks.map((t) => `$${+t.toFixed(4)}`) }, { scale: 'tokens', side: 1, grid: { show: false } }],
      },
      [xs, days.map((d) => d.costUsd), days.map((d) => d.inputTokens + d.outputTokens)],
      box.current,
    );
    return () => plot.destroy();
  }, [days]);
  return html`<div class="chart" ref=${box}></div>`;
}
