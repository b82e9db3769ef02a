/**
 * A trivial agent wired to the terminal channel on the real stdin/stdout, for
 * the pseudo-terminal test: echoes messages (after showing typing), asks for approval on "do it",
 * streams a reply on "stream", and names every command it receives.
 */
import { TerminalChannel } from '../../../src/channels/terminal/adapter.js';
import type { ApprovalPrompt, ChannelDeps, SentMessage } from '../../../src/channels/types.js';
import { silentLogger } from '../../../src/log.js';

const deps: ChannelDeps = {
  log: silentLogger,
  commands: [],
  completions: () => [],
  state: { get: async () => undefined, set: async () => undefined },
};

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
    const message = await channel.send(event.chat, 'stre');
    await channel.edit(message, 'streamed');
    await channel.edit(message, 'streamed reply');
  } else if (event.type === 'message') {
    await channel.typing(event.chat);
    await new Promise((resolve) => setTimeout(resolve, 50));
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
