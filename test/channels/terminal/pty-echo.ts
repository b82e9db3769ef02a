/**
 * A trivial agent wired to the terminal channel on the real stdin/stdout, for
 * the pseudo-terminal test: echoes messages (after showing typing), asks for approval on "do it",
 * streams a markdown reply on "stream", rewrites a status line on "slow", and names every
 * command it receives.
 */
import { TerminalChannel } from '../../../src/channels/terminal/adapter.js';
import { IN_PROGRESS_MARK, type ApprovalPrompt, type ChannelDeps, type SentMessage } from '../../../src/channels/types.js';
import { silentLogger } from '../../../src/log.js';

const deps: ChannelDeps = {
  log: silentLogger,
  commands: [],
  completions: () => [],
  state: { get: async () => undefined, set: async () => undefined },
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const channel = new TerminalChannel({ input: process.stdin, output: process.stdout, userName: 'tester' }, deps);
await channel.start();

let pending: { prompt: ApprovalPrompt; message: SentMessage } | undefined;
for await (const event of channel.events()) {
  if (event.type === 'message' && event.text === 'do it') {
    const prompt: ApprovalPrompt = {
      id: 'ap1',
      title: 'Approval needed',
      tool: 'shell',
      summary: 'Run `ls` in the workspace',
      args: '{"command":"ls"}',
      actions: ['approve', 'always', 'deny'],
      requestedBy: event.sender,
      expiresAt: Date.now() + 600_000,
    };
    pending = { prompt, message: await channel.sendApproval(event.chat, prompt) };
  } else if (event.type === 'message' && event.text === 'stream') {
    // As the agent streams: a growing text with the in-progress mark, then the finished markdown.
    const message = await channel.send(event.chat, `A streamed${IN_PROGRESS_MARK}`);
    for (const text of [`A streamed **reply**${IN_PROGRESS_MARK}`, `A streamed **reply**:\n\n- one${IN_PROGRESS_MARK}`, 'A streamed **reply**:\n\n- one\n- two']) {
      await pause(300);
      await channel.edit(message, text);
    }
  } else if (event.type === 'message' && event.text === 'slow') {
    // A status line rewritten after it has settled, as a slow tool's elapsed time is.
    const status = await channel.send(event.chat, 'Running `slow`… 1 s');
    for (const seconds of [2, 3]) {
      await pause(400);
      await channel.edit(status, `Running \`slow\`… ${seconds} s`);
    }
    await channel.send(event.chat, 'slow done');
  } else if (event.type === 'message') {
    await channel.typing(event.chat);
    await pause(50);
    await channel.send(event.chat, `answer: ${event.text}`);
  } else if (event.type === 'approval' && pending) {
    const decision = event.action === 'approve' ? 'approved' : event.action === 'always' ? 'always' : 'denied';
    await channel.resolveApproval(pending.message, pending.prompt, { decision, by: event.sender.name });
    await channel.send(event.chat, decision === 'denied' ? 'not done' : 'done');
    pending = undefined;
  } else if (event.type === 'command') {
    await channel.send(event.chat, `command: ${event.name}`);
  }
}
process.stdout.write('bye\n');
