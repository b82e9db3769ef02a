/**
 * The console's pages about the bot as a whole: the MCP servers (with a
 * restart for owners), usage per person and day, and each person's own tool
 * choices (read-only, shown under the policy).
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { count, usd } from './format.js';
import { html } from './html.js';
import { Loading, useApi } from './use-api.js';

/** Each MCP server's state, transport, tools and last error; owners can restart one. */
export function McpServers() {
  const [data, error, reload] = useApi('mcp');
  const [said, setSaid] = useState('');
  const [busy, setBusy] = useState('');
  const restart = (name) => {
    setBusy(name);
    setSaid(`Restarting ${name}…`);
    api(`mcp/${encodeURIComponent(name)}/restart`, {}).then(
      (answer) => {
        setBusy('');
        setSaid(answer.text);
        reload();
      },
      (failure) => {
        setBusy('');
        setSaid(failure.message);
      },
    );
  };
  if (!data) return html`<${Loading} error=${error} />`;
  return html`<section>
    <h1>MCP servers</h1>
    ${said && html`<p class="said" role="status">${said}</p>`}
    ${data.servers.length === 0
      ? html`<p class="muted">No MCP servers are configured (mcp.servers in the config).</p>`
      : html`<table><thead><tr><th>Server</th><th>State</th><th>Transport</th><th>Tools</th><th>Last error</th>${data.mayRestart && html`<th></th>`}</tr></thead>
        <tbody>${data.servers.map(
          (s) => html`<tr data-server=${s.name}><td>${s.name}</td><td class=${s.state === 'ready' ? 'ok' : 'warn'}>${s.state}</td><td>${s.transport}</td>
            <td><span class="big-count">${s.tools.length}</span> <span class="muted tool-names">${s.tools.join(', ')}</span></td><td class="muted">${s.lastError ?? '—'}</td>
            ${data.mayRestart && html`<td><button disabled=${busy === s.name} onClick=${() => restart(s.name)}>Restart</button></td>`}</tr>`,
        )}</tbody></table>`}
    ${!data.mayRestart && html`<p class="muted">Only an owner can restart a server.</p>`}
  </section>`;
}

/** Model calls, tokens and cost per person and day, last 14 days. */
export function Usage() {
  const [data, error] = useApi('usage');
  if (!data) return html`<${Loading} error=${error} />`;
  return html`<section>
    <h1>Usage per person, last ${data.days} days</h1>
    <p class="muted">${data.everyone ? 'Everyone who made a model call, by day (UTC).' : 'Your own model calls, by day (UTC).'}</p>
    ${data.rows.length === 0
      ? html`<p class="muted">No model calls in these days.</p>`
      : html`<table class="usage"><thead><tr><th>Person</th><th>Day</th><th class="num">Model calls</th><th class="num">Tokens in</th><th class="num">Tokens out</th><th class="num">Cost</th></tr></thead>
        <tbody>${data.rows.map(
          (r) => html`<tr data-user=${r.userId} data-day=${r.day}><td>${r.userId}</td><td>${r.day}</td><td class="num">${count(r.calls)}</td><td class="num">${count(r.inputTokens)}</td><td class="num">${count(r.outputTokens)}</td><td class="num">${usd(r.costUsd)}</td></tr>`,
        )}</tbody></table>`}
  </section>`;
}

/** Each person's tools set to Always allow or disabled (owners and configured admins), read-only. */
export function ToolChoices() {
  const [data, error] = useApi('permissions');
  if (!data) return html`<${Loading} error=${error} />`;
  return html`<section class="choices">
    <h2>People's own tool choices</h2>
    <p class="muted">Set by each person with “Always allow” on a prompt; undone by them with /permissions reset.</p>
    ${data.length === 0
      ? html`<p class="muted">Nobody has set a tool to Always allow or disabled it.</p>`
      : html`<table data-testid="tool-choices"><thead><tr><th>Person</th><th>Tool</th><th>Choice</th></tr></thead>
        <tbody>${data.flatMap((person) => person.tools.map((t) => html`<tr data-user=${person.userId}><td>${person.userId}</td><td>${t.tool}</td><td>${t.choice}</td></tr>`))}</tbody></table>`}
  </section>`;
}
