// Traffic: for one model or node, request and error rates, latency and time to first byte over the
// gateway's 15-minute window, drawn with uPlot and updated in place as buckets arrive.

import { html } from './html.js';
import { shown, utcTime } from './text.js';
import { Component, createRef } from 'preact';
import uPlot from 'uplot';

const CHARTS = [
  {
    id: 'rate',
    title: 'requests / s',
    series: [
      ['requests/s', '#2563eb', (p, s) => p[1] / s],
      ['errors/s', '#dc2626', (p, s) => p[2] / s],
    ],
  },
  {
    id: 'latency',
    title: 'latency (ms)',
    series: [
      ['p50', '#059669', (p) => p[3]],
      ['p99', '#d97706', (p) => p[4]],
    ],
  },
  {
    id: 'ttfb',
    title: 'time to first byte (ms)',
    series: [
      ['p50', '#7c3aed', (p) => p[5]],
      ['p99', '#db2777', (p) => p[6]],
    ],
  },
];

function chartData(points, chart, bucketSeconds) {
  return [points.map((p) => p[0] / 1000), ...chart.series.map(([, , pick]) => points.map((p) => pick(p, bucketSeconds)))];
}

/** A chart fits the window: 420 px, narrower in a narrow window (at least 260). */
const chartWidth = () => Math.min(420, Math.max(260, window.innerWidth - 48));

class Chart extends Component {
  target = createRef();
  onResize = () => this.plot?.setSize({ width: chartWidth(), height: 180 });
  componentDidMount() {
    window.addEventListener('resize', this.onResize);
    const { chart } = this.props;
    this.plot = new uPlot(
      {
        title: chart.title,
        width: chartWidth(),
        height: 180,
        // The x axis always spans the whole window, so a quiet start does not stretch one bucket.
        scales: { x: { time: true, range: () => [(this.props.now - this.props.windowMs) / 1000, this.props.now / 1000] } },
        series: [
          { value: (u, v) => (v === null || v === undefined ? '--' : utcTime(v * 1000)) },
          ...chart.series.map(([label, stroke]) => ({ label, stroke, width: 2, spanGaps: false })),
        ],
        axes: [{ values: (u, splits) => splits.map((s) => utcTime(s * 1000).slice(0, 5)) }, { size: 50 }],
        // One time zone on the page: UTC, as the request log and the Events view.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'),
      },
      this.data(),
      this.target.current,
    );
  }
  data() {
    return chartData(this.props.points, this.props.chart, this.props.bucketMs / 1000);
  }
  shouldComponentUpdate(next) {
    if (next.points !== this.props.points || next.now !== this.props.now) {
      // props are read by the x range during setData: let them be the new ones first.
      this.props = next;
      this.plot?.setData(chartData(next.points, next.chart, next.bucketMs / 1000));
    }
    return false;
  }
  componentWillUnmount() {
    window.removeEventListener('resize', this.onResize);
    this.plot?.destroy();
  }
  render({ chart }) {
    return html`<div class="chart" data-chart=${chart.id} ref=${this.target}></div>`;
  }
}

export function busiest(traffic, prefix) {
  let best;
  let most = -1;
  for (const [key, points] of traffic) {
    if (!key.startsWith(prefix)) continue;
    const total = points.reduce((n, p) => n + p[1], 0);
    if (total > most) [best, most] = [key, total];
  }
  return best;
}

export function TrafficView({ state, selected, onSelect }) {
  const keys = [...state.traffic.keys()].sort();
  // The aggregate (every request) first, unless a model or node is picked.
  const key =
    selected && state.traffic.has(selected)
      ? selected
      : state.traffic.has('all')
        ? 'all'
        : (busiest(state.traffic, 'model:') ?? keys[0]);
  const points = key === undefined ? [] : state.traffic.get(key);
  const total = points.reduce((n, p) => n + p[1], 0);
  return html`<section id="traffic">
    <h2>Traffic <span class="muted">last ${Math.round(state.windowMs / 60000)} minutes</span></h2>
    ${
      key === undefined
        ? html`<p class="muted" id="no-traffic">No requests yet.</p>`
        : html`<p>
          <label>series <select id="traffic-series" value=${key} onChange=${(e) => onSelect(e.currentTarget.value)}>
            ${keys.map((k) => html`<option value=${k}>${k === 'all' ? 'all requests' : shown(k.replace(':', ': '))}</option>`)}
          </select></label>
          <span id="traffic-total" data-total=${total}> ${total} requests in the window</span>
        </p>
        <div class="charts" key=${key}>${CHARTS.map((chart) => html`<${Chart} chart=${chart} points=${points} bucketMs=${state.bucketMs} now=${state.now} windowMs=${state.windowMs} />`)}</div>`
    }
  </section>`;
}
