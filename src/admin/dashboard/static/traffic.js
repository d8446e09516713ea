// Traffic: for one model or node, request and error rates, latency and time to first byte over the
// gateway's 15-minute window, drawn with uPlot and updated in place as buckets arrive. Axes read in
// whole numbers of a unit that fits (chart-scale.js), sized to their widest label; idle buckets are
// gaps in a duration; off the chart, each legend shows its newest value.

import { html } from './html.js';
import { shown, utcTime } from './text.js';
import { Component, createRef } from 'preact';
import uPlot from 'uplot';
import { latestIndex, loneIndices, tickLabel, ticksFor, unitFor, valueLabel, windowBuckets } from './chart-scale.js';

const CHARTS = [
  {
    id: 'rate',
    title: 'requests',
    kind: 'rate',
    series: [
      // An idle bucket asked nothing: a rate of zero.
      ['requests', '#2563eb', (p, s) => (p === undefined ? 0 : p[1] / s)],
      ['errors', '#dc2626', (p, s) => (p === undefined ? 0 : p[2] / s)],
    ],
  },
  {
    id: 'latency',
    title: 'latency',
    kind: 'ms',
    series: [
      // An idle bucket has no duration: a gap, never a line across it.
      ['p50', '#059669', (p) => p?.[3] ?? null],
      ['p99', '#d97706', (p) => p?.[4] ?? null],
    ],
  },
  {
    id: 'ttfb',
    title: 'time to first byte',
    kind: 'ms',
    series: [
      ['p50', '#7c3aed', (p) => p?.[5] ?? null],
      ['p99', '#db2777', (p) => p?.[6] ?? null],
    ],
  },
];

/** uPlot's data: the window's buckets (idle ones in place) and each series' value in them. */
function chartData({ points, chart, bucketMs, now, windowMs }) {
  const buckets = windowBuckets(points, now, windowMs, bucketMs);
  return [
    buckets.map(([start]) => start / 1000),
    ...chart.series.map(([, , pick]) => buckets.map(([, p]) => pick(p, bucketMs / 1000))),
  ];
}

/** A chart fits the window: 420 px, narrower in a narrow window (at least 260). */
const chartWidth = () => Math.min(420, Math.max(260, window.innerWidth - 48));
const HEIGHT = 180;
/** Ticks at least this far apart (px): a label's height and some air. */
const TICK_SPACE_PX = 28;

class Chart extends Component {
  target = createRef();
  /** The y axis's unit, picked each time the scale is set (for the largest value drawn). */
  unit = unitFor('ms', 0);
  onResize = () => this.plot?.setSize({ width: chartWidth(), height: HEIGHT });
  componentDidMount() {
    window.addEventListener('resize', this.onResize);
    const { chart } = this.props;
    const element = this.target.current;
    const hovered = (idx) => idx !== null && idx !== undefined;
    // The bucket a legend shows: the one under the cursor, or off the chart the newest with a value.
    const shownAt = (u, idx) => (hovered(idx) ? idx : latestIndex(u.data.slice(1)));
    this.plot = new uPlot(
      {
        title: chart.title,
        width: chartWidth(),
        height: HEIGHT,
        scales: {
          // The x axis always spans the whole window, so a quiet start does not stretch one bucket.
          x: { time: true, range: () => [(this.props.now - this.props.windowMs) / 1000, this.props.now / 1000] },
          // From 0 to a whole number of the unit that fits the largest value.
          y: {
            range: (u, _min, max) => {
              const plotPx = (u.bbox?.height ?? 0) / uPlot.pxRatio || HEIGHT * 0.6;
              const ticks = Math.max(1, Math.floor(plotPx / TICK_SPACE_PX));
              this.unit = unitFor(chart.kind, max);
              this.ticks = ticksFor(max, this.unit, ticks);
              return [0, this.ticks.top];
            },
          },
        },
        // Off the chart, the legend shows the newest bucket with a value (not "--"); over it, the bucket under the cursor.
        series: [
          {
            label: 'UTC',
            value: (u, v, _s, idx) => {
              const at = shownAt(u, idx);
              const time = at === null ? undefined : u.data[0][at];
              return time === undefined ? 'no requests' : `${hovered(idx) ? '' : 'latest '}${utcTime(time * 1000)}`;
            },
          },
          ...chart.series.map(([label, stroke]) => ({
            label,
            stroke,
            width: 2,
            spanGaps: false,
            // A bucket alone between idle ones has no line to it: it is drawn as a dot.
            points: { show: false, size: 6, fill: stroke, filter: (u, sidx) => loneIndices(u.data[sidx]) },
            value: (u, v, sidx, idx) => {
              const at = shownAt(u, idx);
              return valueLabel(chart.kind, at === null ? null : u.data[sidx][at], this.unit);
            },
          })),
        ],
        axes: [
          { values: (u, splits) => splits.map((s) => utcTime(s * 1000).slice(0, 5)) },
          {
            splits: () => this.ticks?.splits ?? [0],
            values: (u, splits) => {
              const labels = splits.map((s) => tickLabel(s, this.unit));
              element.dataset.yLabels = labels.join('|');
              return labels;
            },
            // Wide enough for the widest label, measured in the axis's own font.
            size: (u, values, axisIdx) => {
              const axis = u.axes[axisIdx];
              if (values === null || values === undefined || values.length === 0) return 50;
              u.ctx.font = axis.font[0];
              const widest = Math.max(...values.map((v) => u.ctx.measureText(v).width)) / uPlot.pxRatio;
              const size = Math.ceil(widest + axis.ticks.size + axis.gap + 4);
              element.dataset.yLabelWidth = String(Math.ceil(widest));
              element.dataset.yAxisSize = String(size);
              return size;
            },
          },
        ],
        // One time zone on the page: UTC, as the request log and the Events view.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'),
      },
      chartData(this.props),
      element,
    );
    element.uplot = this.plot;
  }
  shouldComponentUpdate(next) {
    if (next.points !== this.props.points || next.now !== this.props.now) {
      // props are read by the x range during setData: let them be the new ones first.
      this.props = next;
      this.plot?.setData(chartData(next));
      // The legend follows the newest bucket unless the cursor is on the chart.
      if (this.plot && (this.plot.cursor.idx ?? null) === null) this.plot.setLegend({ idx: null });
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
