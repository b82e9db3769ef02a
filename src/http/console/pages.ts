/**
 * The console's server-made pages: the sign-in page a link opens, the pages
 * that say why a link or session was refused, and the shell that loads the
 * bundled script. All static text without inline script or style (the
 * Content-Security-Policy forbids both); the only value put in is the token
 * the link itself carried, escaped.
 */

/** The headers of every console response. */
export const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  // Not no-referrer: with it a browser sends `Origin: null` on the console's own form posts, which the origin check refuses.
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
} as const;

/** Escapes text for HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** A plain page: a title and paragraphs (escaped), with the console's stylesheet when there is one. */
export function plainPage(title: string, paragraphs: string[], css?: string, form?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><link rel="icon" href="data:,">
<title>${escapeHtml(title)} · pincer console</title>${css ? `<link rel="stylesheet" href="/console/assets/${css}">` : ''}</head>
<body class="plain"><main><h1>${escapeHtml(title)}</h1>${paragraphs.map((text) => `<p>${escapeHtml(text)}</p>`).join('')}${form ?? ''}</main></body></html>
`;
}

/** What to do to get a new link. */
const HOW_TO_SIGN_IN = 'To sign in, send /console to the bot in a direct message (owners and admins), or run `pincer console-link` on the machine that runs it.';

/** The page a link opens: one button that uses the link (a link preview that fetches the page does not). */
export function signInPage(token: string, css?: string): string {
  const form = `<form method="post" action="/console/sign-in"><input type="hidden" name="t" value="${escapeHtml(token)}"><button type="submit">Sign in</button></form>`;
  return plainPage('Sign in to the console', ['This link signs you in once and is valid for ten minutes from when it was sent.'], css, form);
}

/** Why a link was refused, in words. */
export function refusedLinkPage(reason: 'used' | 'expired' | 'unknown' | 'not-allowed', css?: string): string {
  const why = {
    used: 'This sign-in link was already used. Each link signs in once.',
    expired: 'This sign-in link has expired. Links are valid for ten minutes.',
    unknown: 'This sign-in link is not valid.',
    'not-allowed': 'This account may no longer open the console.',
  }[reason];
  return plainPage('Link not valid', [why, HOW_TO_SIGN_IN], css);
}

/** The page for a request without a live session. */
export function signedOutPage(css?: string): string {
  return plainPage('Not signed in', ['Your session has ended or you have not signed in yet.', HOW_TO_SIGN_IN], css);
}

/** A page for anything else that went wrong (no detail: that goes to the log). */
export function errorPage(status: number, css?: string): string {
  return plainPage(status === 404 ? 'Not found' : 'Something went wrong', [status === 404 ? 'There is no such page in the console.' : 'The console could not answer. The details are in the bot\'s log.'], css);
}

/** The application's shell: the bundled script draws every page. */
export function shellPage(script: string, css: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><link rel="icon" href="data:,">
<title>pincer console</title><link rel="stylesheet" href="/console/assets/${css}"><script type="module" src="/console/assets/${script}"></script></head>
<body><div id="app"></div></body></html>
`;
}
