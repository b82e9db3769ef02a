/** Small formatters for the console's pages. */

/** Dollars with cents, or more digits under a cent. */
export function usd(value) {
  if (!value) return '$0.00';
  return value < 0.01 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

/** A count with thousands separated. */
export function count(value) {
  return (value ?? 0).toLocaleString('en');
}

/** A time as the reader's local date and time. */
export function when(ms) {
  return ms ? new Date(ms).toLocaleString() : '—';
}

/** A duration in words: 3 d 4 h, 5 m 2 s, 120 ms. */
export function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${(ms / 1000).toFixed(1)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} m ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} m`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}
