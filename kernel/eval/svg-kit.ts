/** Small helpers for hand-written inline SVG charts: escaping, scales, tick choice, palette, markers. */

export function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Rounds coordinates so the markup stays small and stable. */
export const px = (n: number) => (Math.round(n * 10) / 10).toString();

export interface LinearScale {
  (value: number): number;
  domain: [number, number];
  range: [number, number];
}

export function linearScale(domain: [number, number], range: [number, number]): LinearScale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0 || 1;
  const scale = ((v: number) => r0 + ((v - d0) / span) * (r1 - r0)) as LinearScale;
  scale.domain = domain;
  scale.range = range;
  return scale;
}

/** Round tick values (1, 2, 2.5, 5 x 10^k steps) covering [min, max] with about `count` ticks. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!(max > min)) return [min];
  const rough = (max - min) / Math.max(1, count);
  const power = Math.pow(10, Math.floor(Math.log10(rough)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
  const ticks: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) ticks.push(Math.round(v / step) * step);
  return ticks;
}

/** The upper end of a nice axis that contains `max`. */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const ticks = niceTicks(0, max, 5);
  const step = ticks.length > 1 ? ticks[1]! - ticks[0]! : max;
  const last = ticks[ticks.length - 1]!;
  return last >= max ? last : last + step;
}

export function formatTokens(n: number): string {
  if (n >= 1_000_000) return `${trim(n / 1_000_000)}M`;
  if (n >= 1_000) return `${trim(n / 1_000)}k`;
  return String(Math.round(n));
}

function trim(x: number): string {
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1).replace(/\.0$/, '') : x.toFixed(2).replace(/\.?0+$/, '');
}

export function formatDuration(ms: number): string {
  if (ms === 0) return '0';
  if (ms < 60_000) return `${Math.round(ms / 1000)}s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)}m`;
  const hours = ms / 3_600_000;
  if (hours < 48) {
    const h = Math.floor(hours);
    const m = Math.round((hours - h) * 60);
    return m === 0 ? `${h}h` : `${h}h${String(m).padStart(2, '0')}`;
  }
  return `${trim(hours / 24)}d`;
}

const TIME_STEPS_MS = [1, 5, 10, 15, 30].map((s) => s * 1000).concat([1, 2, 5, 10, 15, 20, 30].map((m) => m * 60_000), [1, 2, 3, 4, 6, 8, 12].map((h) => h * 3_600_000), [1, 2, 7, 14, 30].map((d) => d * 86_400_000));

/** Elapsed-time ticks on round steps (10 min, 1 h, 6 h, ...), about `count` of them from 0. */
export function timeTicks(spanMs: number, count = 4): number[] {
  const longest = TIME_STEPS_MS[TIME_STEPS_MS.length - 1]!;
  // Past the longest round step, whole multiples of it: a long span must not crowd its axis.
  const step = TIME_STEPS_MS.find((s) => spanMs / s <= count) ?? Math.ceil(spanMs / count / longest) * longest;
  const ticks: number[] = [];
  for (let t = 0; t <= spanMs; t += step) ticks.push(t);
  return ticks;
}

/**
 * One colour per strategy: the 13 built-in ones (auto included) and two more before any repeats.
 * Okabe-Ito first, distinguishable with the common colour-vision deficiencies, then darker hues from
 * Paul Tol's schemes; Okabe-Ito's yellow gives way to olive, since a yellow mark on the white card
 * all but disappears. Every colour keeps at least 2:1 against white and about 22 (CIELAB ΔE) from
 * every other, so a swatch in the table, which has no shape to tell it apart, still names one strategy.
 */
export const PALETTE = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#CC79A7',
  '#56B4E9',
  '#D55E00',
  '#999933',
  '#000000',
  '#332288',
  '#882255',
  '#117733',
  '#8C564B',
  '#888888',
  '#AA4499',
  '#661100',
];
export const SHAPES = ['circle', 'square', 'triangle', 'diamond'] as const;
export type Shape = (typeof SHAPES)[number];

/** Colour and shape together, so more series than colours still stay apart (and survive greyscale). */
export function seriesStyle(index: number): { color: string; shape: Shape } {
  return { color: PALETTE[index % PALETTE.length]!, shape: SHAPES[Math.floor(index / PALETTE.length) % SHAPES.length]! };
}

export function marker(shape: Shape, x: number, y: number, r: number, attrs: string): string {
  switch (shape) {
    case 'circle':
      return `<circle cx="${px(x)}" cy="${px(y)}" r="${px(r)}" ${attrs}/>`;
    case 'square':
      return `<rect x="${px(x - r)}" y="${px(y - r)}" width="${px(2 * r)}" height="${px(2 * r)}" ${attrs}/>`;
    case 'triangle':
      return `<polygon points="${px(x)},${px(y - r * 1.15)} ${px(x + r)},${px(y + r * 0.85)} ${px(x - r)},${px(y + r * 0.85)}" ${attrs}/>`;
    case 'diamond':
      return `<polygon points="${px(x)},${px(y - r * 1.2)} ${px(x + r * 1.2)},${px(y)} ${px(x)},${px(y + r * 1.2)} ${px(x - r * 1.2)},${px(y)}" ${attrs}/>`;
  }
}
