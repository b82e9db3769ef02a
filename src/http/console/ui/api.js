/**
 * The console page's talk with the server: JSON reads, changes that carry the
 * session's CSRF token, and the live stream of changed threads.
 */

let csrf = '';

/** Remembers the CSRF token the session gave. */
export function setCsrf(token) {
  csrf = token;
}

/** GET or POST a console API path; throws an Error with the server's words when it refuses. */
export async function api(path, body) {
  const init = body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify(body) };
  const response = await fetch(`/console/api/${path}`, { credentials: 'same-origin', ...init });
  if (response.status === 401) {
    window.location.reload();
    throw new Error('signed out');
  }
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

const listeners = new Set();
let source;

/** Calls `listener({thread, kind})` for each change the server reports; returns the unsubscribe function. */
export function onChange(listener) {
  if (!source) {
    source = new EventSource('/console/api/events');
    source.addEventListener('change', (event) => {
      const change = JSON.parse(event.data);
      for (const each of listeners) each(change);
    });
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}
