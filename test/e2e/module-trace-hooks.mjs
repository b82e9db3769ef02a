/** The loader hooks of module-trace.mjs: each module's URL as it loads, and when (epoch milliseconds, after a space). */
import { appendFileSync } from 'node:fs';

/** @type {string} */
let file = '';

/** @param {{ file: string }} data */
export function initialize(data) {
  file = data.file;
}

/**
 * @param {string} url
 * @param {unknown} context
 * @param {(url: string, context: unknown) => unknown} next
 */
export function load(url, context, next) {
  appendFileSync(file, `${url} ${Date.now()}\n`);
  return next(url, context);
}
