/** Reading a console API path from a page, and the line shown while it loads (or the error it gave). */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { html } from './html.js';

/** Reads `path` now and on each call of the `reload` it gives: [data, error, reload]. */
export function useApi(path) {
  const [state, setState] = useState({ data: undefined, error: undefined });
  const load = useCallback(() => {
    api(path).then(
      (data) => setState({ data, error: undefined }),
      (error) => setState((previous) => ({ data: previous.data, error: error.message })),
    );
  }, [path]);
  useEffect(load, [load]);
  return [state.data, state.error, load];
}

/** "Loading…", or the error the read gave. */
export function Loading({ error }) {
  return error ? html`<p class="error" role="alert">${error}</p>` : html`<p class="muted">Loading…</p>`;
}
