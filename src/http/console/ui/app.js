/**
 * The console page's entry: reads who is signed in (and the CSRF token), then
 * draws the page the address's hash names (#/, #/conversations, ...).
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './app.css';
import { api, setCsrf } from './api.js';
import { html } from './html.js';
import { McpServers, Usage } from './operations.js';
import { Conversation, Conversations, Overview, Policy, TraceView, Work } from './pages.js';

function currentRoute() {
  const parts = window.location.hash.replace(/^#\/?/, '').split('/');
  return { page: parts[0] || 'overview', arg: parts.slice(1).map(decodeURIComponent).join('/') };
}

function Page({ route, me }) {
  switch (route.page) {
    case 'conversations':
      return route.arg ? html`<${Conversation} threadKey=${route.arg} key=${route.arg} />` : html`<${Conversations} />`;
    case 'jobs':
      return html`<${Work} />`;
    case 'policy':
      return html`<${Policy} me=${me} />`;
    case 'mcp':
      return html`<${McpServers} />`;
    case 'usage':
      return html`<${Usage} />`;
    case 'traces':
      return html`<${TraceView} id=${route.arg} key=${route.arg} />`;
    default:
      return html`<${Overview} />`;
  }
}

function App() {
  const [me, setMe] = useState(undefined);
  const [route, setRoute] = useState(currentRoute());
  useEffect(() => {
    api('session').then((session) => {
      setCsrf(session.csrf);
      setMe(session);
    });
    const changed = () => setRoute(currentRoute());
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  if (!me) return html`<p class="muted">Loading…</p>`;
  const signOut = () => api('sign-out', {}).then(() => window.location.reload());
  const link = (page, label) => html`<a href=${`#/${page}`} class=${route.page === page || (page === 'overview' && !route.page) ? 'active' : ''}>${label}</a>`;
  return html`<header>
      <strong>pincer</strong>
      <nav>${link('overview', 'Overview')} ${link('conversations', 'Conversations')} ${link('jobs', 'Jobs and routines')} ${link('usage', 'Usage')} ${link('policy', 'Policy')} ${link('mcp', 'MCP servers')}</nav>
      <span class="me">${me.name} (${me.role}) <button class="small" onClick=${signOut}>Sign out</button></span>
    </header>
    <main><${Page} route=${route} me=${me} /></main>`;
}

render(html`<${App} />`, document.getElementById('app'));
