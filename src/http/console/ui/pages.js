/**
 * The console's pages: overview, conversations and one conversation (live),
 * jobs and routines, policy, and a trace's waterfall. Each reads its JSON
 * from the server and draws it; nothing here is trusted by the server.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, onChange } from './api.js';
import { UsageChart } from './chart.js';
import { count, duration, usd, when } from './format.js';
import { html } from './html.js';
import { ToolChoices } from './operations.js';
import { Loading, useApi } from './use-api.js';

/** Channels, models, uptime, turns in flight, errors, and usage today and over 14 days. */
export function Overview() {
  const [data, error, reload] = useApi('overview');
  useEffect(() => onChange((change) => change.kind === 'turn' && reload()), [reload]);
  if (!data) return html`<${Loading} error=${error} />`;
  return html`<section>
    <h1>Overview</h1>
    <div class="cards">
      <div class="card"><h2>Uptime</h2><p class="big">${data.uptimeSeconds < 60 ? 'under a minute' : duration(data.uptimeSeconds * 1000)}</p></div>
      <div class="card"><h2>Turns in flight</h2><p class="big" data-testid="turns-in-flight">${data.turnsInFlight}</p><p class="muted">${data.activeThreads} active threads, ${data.queuedMessages} queued</p></div>
      <div class="card"><h2>Today</h2><p class="big">${usd(data.today.costUsd)}</p><p class="muted">${count(data.today.inputTokens)} in / ${count(data.today.outputTokens)} out tokens, ${count(data.today.calls)} calls</p></div>
      <div class="card"><h2>Errors, last hour</h2><p class="big">${data.errorsLastHour}</p></div>
      <div class="card" data-testid="instances"><h2>Instances</h2><p class="big">${!data.instances.shared ? 'one instance' : data.instances.unavailable ? 'unknown' : data.instances.list.length}</p>
        ${data.instances.shared && html`<ul class="instances">${data.instances.list.map((i) => html`<li>${i.id}${i.self ? ' (this one)' : ''} <span class="muted">${i.channels.join(', ')}</span></li>`)}</ul>`}</div>
    </div>
    <h2>Channels</h2>
    <table><thead><tr><th>Channel</th><th>State</th></tr></thead>
      <tbody>${data.channels.map((c) => html`<tr><td>${c.name}</td><td class=${c.state === 'receiving' ? 'ok' : 'warn'}>${c.state}</td></tr>`)}</tbody></table>
    <h2>Models</h2>
    <ul>${data.models.map((m) => html`<li>${m.name}${m.isDefault ? ' (default)' : ''}</li>`)}</ul>
    <h2>Cost and tokens, last 14 days</h2>
    <${UsageChart} days=${data.days} />
  </section>`;
}

/** Every conversation the viewer may see. */
export function Conversations() {
  const [data, error, reload] = useApi('conversations');
  useEffect(() => onChange((change) => change.kind === 'turn' && reload()), [reload]);
  if (!data) return html`<${Loading} error=${error} />`;
  return html`<section>
    <h1>Conversations</h1>
    ${data.length === 0
      ? html`<p class="muted">No conversation yet: one is listed once the bot has answered in it.</p>`
      : html`<table><thead><tr><th>Platform</th><th>Chat</th><th>Last activity</th><th>Turns</th><th>Cost</th></tr></thead>
        <tbody>${data.map(
          (c) => html`<tr><td>${c.channel}</td><td><a href=${`#/conversations/${encodeURIComponent(c.key)}`}>${c.label}</a> <span class="muted">${c.kind}</span></td><td>${when(c.lastAt)}</td><td>${c.turns}</td><td>${usd(c.costUsd)}</td></tr>`,
        )}</tbody></table>`}
  </section>`;
}

/** One conversation: messages, tool calls with their results, the open approval, traces; live. */
export function Conversation({ threadKey }) {
  const [data, error, reload] = useApi(`conversations/${encodeURIComponent(threadKey)}`);
  useEffect(() => onChange((change) => change.thread === threadKey && reload()), [threadKey, reload]);
  if (!data) return html`<${Loading} error=${error} />`;
  const results = new Map(data.messages.filter((m) => m.role === 'tool').map((m) => [m.callId, m.text]));
  return html`<section>
    <p><a href="#/conversations">← Conversations</a></p>
    <h1>${data.label}</h1>
    <p class="muted">${data.kind} · ${data.turns} turns · ${usd(data.costUsd)}</p>
    ${data.pendingApproval &&
    html`<div class="approval" role="status"><strong>Waiting for approval:</strong> ${data.pendingApproval.tool}: ${data.pendingApproval.summary}<br /><span class="muted">Answered in the chat only; expires ${when(data.pendingApproval.expiresAt)}.</span></div>`}
    <ol class="messages">
      ${data.messages
        .filter((m) => m.role !== 'tool')
        .map(
          (m) => html`<li class=${`message ${m.role}`}>
            <span class="who">${m.role === 'user' ? 'User' : m.role === 'summary' ? 'Summary of the earlier conversation (compacted)' : 'Bot'}</span>
            ${m.text && html`<p class="text">${m.text}</p>`}
            ${(m.calls ?? []).map(
              (call) => html`<details class="call" data-tool=${call.tool} open>
                <summary>Tool call: ${call.tool}</summary>
                <pre>${call.args}</pre>
                ${results.has(call.id) ? html`<pre class="result">${results.get(call.id)}</pre>` : html`<p class="muted">running…</p>`}
              </details>`,
            )}
          </li>`,
        )}
    </ol>
    <h2>Guards and compactions</h2>
    ${data.marks.length === 0
      ? html`<p class="muted">No loop guard acted and the history was not compacted since this instance started.</p>`
      : html`<ul class="marks" data-testid="marks">${data.marks.map((mark) => html`<li class=${`mark ${mark.kind}`} data-kind=${mark.kind} data-action=${mark.action}>${when(mark.at)}: ${markText(mark)}</li>`)}</ul>`}
    <h2>Traces</h2>
    ${!data.tracesRecorded
      ? html`<p class="muted">Traces are not recorded on this instance.</p>`
      : data.traces.length === 0
        ? html`<p class="muted">No trace yet.</p>`
        : html`<ul>${data.traces.map((t) => html`<li><a href=${`#/traces/${encodeURIComponent(t.id)}`}>${when(t.startedAt)}: ${t.kind}, ${t.outcome}, ${duration(t.durationMs)}, ${t.spanCount} spans, ${usd(t.costUsd)}</a></li>`)}</ul>`}
  </section>`;
}

const GUARD_ACTIONS = {
  warning: 'warned the model that it repeats itself',
  forced_answer: 'forced an answer without tools',
  question: 'asked the person (Continue or Stop)',
  stopped: 'stopped the turn',
};

/** A guard's or a compaction's line in a conversation. */
function markText(mark) {
  if (mark.kind === 'compaction') return `History compacted: ${mark.before} messages became ${mark.after}${mark.forced ? ' (the context was full)' : ''}.`;
  return `Loop guard (${mark.guard.replace('_', ' ')}) ${GUARD_ACTIONS[mark.action] ?? mark.action}${mark.summary ? `: ${mark.summary}` : '.'}`;
}

/** Jobs and routines, with cancel, pause and resume (the commands decide who may). */
export function Work() {
  const [data, error, reload] = useApi('work');
  const [said, setSaid] = useState('');
  // Jobs change state without a chat event (a step, a firing): read again every few seconds while the page is open.
  useEffect(() => {
    const timer = setInterval(reload, 5_000);
    return () => clearInterval(timer);
  }, [reload]);
  const act = (path) =>
    api(path, {}).then(
      (answer) => {
        setSaid(answer.text || 'Done.');
        reload();
      },
      (failure) => setSaid(failure.message),
    );
  if (!data) return html`<${Loading} error=${error} />`;
  const open = (state) => !['completed', 'failed', 'cancelled'].includes(state);
  return html`<section>
    <h1>Jobs and routines</h1>
    ${said && html`<p class="said" role="status">${said}</p>`}
    <h2>Jobs</h2>
    ${data.jobs.length === 0
      ? html`<p class="muted">No jobs.</p>`
      : html`<table><thead><tr><th>Job</th><th>State</th><th>Owner</th><th>Steps</th><th>Updated</th><th></th></tr></thead>
      <tbody>${data.jobs.map(
        (j) => html`<tr data-job=${j.id}><td>${j.id} “${j.title}”</td><td>${j.state}</td><td>${j.owner}</td><td>${j.steps}</td><td>${when(j.updatedAt)}</td>
          <td>${open(j.state) && html`<button onClick=${() => act(`jobs/${j.id}/cancel`)}>Cancel</button>`}</td></tr>`,
      )}</tbody></table>`}
    <h2>Routines</h2>
    ${data.routines.length === 0
      ? html`<p class="muted">No routines.</p>`
      : html`<table><thead><tr><th>Routine</th><th>Schedule</th><th>Next firing</th><th>Owner</th><th></th></tr></thead>
      <tbody>${data.routines.map(
        (r) => html`<tr data-routine=${r.id}><td>${r.id} “${r.name}”</td><td>${r.schedule}</td><td>${r.enabled ? when(r.nextAt) : 'paused'}</td><td>${r.owner}</td>
          <td>${r.enabled ? html`<button onClick=${() => act(`routines/${r.id}/pause`)}>Pause</button>` : html`<button onClick=${() => act(`routines/${r.id}/resume`)}>Resume</button>`}</td></tr>`,
      )}</tbody></table>`}
  </section>`;
}

const MODES = ['allow', 'ask', 'disable', 'reset'];

/** The tool policy of each scope the viewer administers, changed as `/policy` changes it. */
export function Policy({ me }) {
  const [data, error, reload] = useApi('policy');
  const [said, setSaid] = useState('');
  const change = (scope, tool, mode) =>
    api('policy', { scope, tool, mode }).then(
      (answer) => {
        setSaid(answer.text);
        reload();
      },
      (failure) => setSaid(failure.message),
    );
  if (!data) return html`<${Loading} error=${error} />`;
  return html`<section>
    <h1>Tool policy</h1>
    ${said && html`<p class="said" role="status">${said}</p>`}
    ${data.map(
      (scope) => html`<h2>${scope.label}</h2>
      <table data-scope=${scope.scope}><thead><tr><th>Tool</th><th>Mode</th><th>Set</th><th>Change</th></tr></thead>
        <tbody>${scope.tools.map(
          (t) => html`<tr data-tool=${t.tool}><td>${t.tool}</td><td>${t.mode}</td><td class="muted">${t.source}</td>
            <td>${MODES.map((mode) => html`<button class="small" disabled=${mode === t.mode && t.source !== 'default'} onClick=${() => change(scope.scope, t.tool, mode)}>${mode}</button> `)}</td></tr>`,
        )}</tbody></table>`,
    )}
    ${me.seesEveryone && html`<${ToolChoices} />`}
  </section>`;
}

/** A trace as a waterfall: one bar per span, placed by its start and length. */
export function TraceView({ id }) {
  const [data, error] = useApi(`traces/${encodeURIComponent(id)}`);
  if (!data) return html`<${Loading} error=${error} />`;
  const total = Math.max(1, data.durationMs);
  return html`<section>
    <p><a href="#/conversations">← Conversations</a></p>
    <h1>Trace of a ${data.kind.replace('_', ' ')}</h1>
    <p class="muted">${when(data.startedAt)} · ${duration(data.durationMs)} · ${data.outcome}</p>
    <div class="waterfall" role="list">
      ${data.spans.map(
        (span) => html`<div class="span-row" role="listitem" data-kind=${span.kind}>
          <div class="span-label">${span.kind}: ${span.name}</div>
          <div class="span-track"><div class=${`span-bar ${span.kind}${span.error ? ' failed' : ''}`} style=${{ left: `${((span.startedAt - data.startedAt) / total) * 100}%`, width: `${Math.max(0.5, (span.durationMs / total) * 100)}%` }}></div></div>
          <div class="span-time">${duration(span.durationMs)}${span.error ? ` · ${span.error}` : ''}</div>
          <div class="span-attrs muted">${Object.entries(span.attributes).map(([k, v]) => `${k}=${v}`).join(' · ')}</div>
        </div>`,
      )}
    </div>
  </section>`;
}
