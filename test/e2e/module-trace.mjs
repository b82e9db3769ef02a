/**
 * Loaded with `node --import` (through NODE_OPTIONS): appends the URL of every
 * module the process loads to the file named by PINCER_MODULE_TRACE, ES
 * modules as they load (a loader hook, with the time each loaded) and
 * CommonJS ones from the require cache when the process exits (no time).
 */
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const file = process.env.PINCER_MODULE_TRACE;
if (file) {
  register('./module-trace-hooks.mjs', import.meta.url, { data: { file } });
  const require = createRequire(import.meta.url);
  process.on('exit', () => {
    const loaded = Object.keys(require.cache).map((path) => pathToFileURL(path).href);
    appendFileSync(file, loaded.map((url) => `${url}\n`).join(''));
  });
}
