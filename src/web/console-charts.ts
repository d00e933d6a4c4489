/**
 * The dashboard's small charts: server-rendered SVG bars (no script, no library). The numbers come
 * from the audit trail (`audit.countBuckets`); the markup is built here from numbers only, so nothing
 * a user typed can reach it.
 */

export interface Series {
  label: string;
  values: number[];
  /** 'ok' or 'bad': the colour class of the bars (web.css). */
  tone: 'ok' | 'bad';
}

export interface Chart {
  svg: string;
  /** Total per series, for the caption and the table screen readers get. */
  totals: { label: string; total: number }[];
}

/** Bucket edges: `count` windows of `stepMs` ending at `end` (oldest first), `count + 1` dates. */
export function bucketEdges(end: Date, stepMs: number, count: number): Date[] {
  const last = Math.ceil(end.getTime() / stepMs) * stepMs;
  return Array.from({ length: count + 1 }, (_, i) => new Date(last - (count - i) * stepMs));
}

/** Two series side by side per bucket, scaled to the largest bar; `title` is the SVG's accessible name. */
export function barChart(title: string, series: Series[], width = 360, height = 90): Chart {
  const n = Math.max(...series.map((s) => s.values.length), 1);
  const max = Math.max(1, ...series.flatMap((s) => s.values));
  const slot = width / n;
  const bar = Math.max(1, (slot - 1) / series.length);
  const rects: string[] = [];
  series.forEach((s, k) => {
    s.values.forEach((v, i) => {
      if (!v) return;
      const h = Math.max(1, Math.round((v / max) * (height - 12)));
      const x = (i * slot + k * bar).toFixed(1);
      rects.push(`<rect class="bar-${s.tone}" x="${x}" y="${height - h}" width="${bar.toFixed(1)}" height="${h}"><title>${v}</title></rect>`);
    });
  });
  const name = title.replace(/[<>&"]/g, '');
  const svg =
    `<svg class="chart" viewBox="0 0 ${width} ${height}" width="100%" height="${height}" role="img" aria-label="${name}" preserveAspectRatio="none">` +
    `<line class="axis" x1="0" y1="${height - 0.5}" x2="${width}" y2="${height - 0.5}"/>` +
    `<text class="scale" x="2" y="10">${max}</text>` +
    rects.join('') +
    '</svg>';
  return { svg, totals: series.map((s) => ({ label: s.label, total: s.values.reduce((a, b) => a + b, 0) })) };
}
