/** Values of the configuration that several schemas share. */
import { z } from 'zod';

/**
 * An http(s) URL. `new URL('localhost:8080/v1')` reads "localhost" as a scheme, so
 * the scheme is checked explicitly, and a missing one is suggested.
 */
export function httpUrl() {
  return z.url({
    protocol: /^https?$/,
    error: (issue) => {
      const value = String(issue.input);
      const hint = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? '' : ` (did you mean "http://${value}"?)`;
      return `expected an http:// or https:// URL${hint}`;
    },
  });
}
