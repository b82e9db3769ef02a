/**
 * A fake Slack (Web API, Socket Mode, response URLs, signed HTTP delivery)
 * for driving the real Bolt app in tests.
 */
export { FakeSlack, MANIFEST_SCOPES, startFakeSlack, type ApiCall, type FakeSlackOptions, type InjectedFailure } from './server.js';
export { signSlackRequest, postSigned, httpBodyOf } from './signing.js';
export { readableText, messageText } from './readable.js';
export type { FakeConversation, FakeMessage, FakeUser, ConversationType } from './workspace.js';
export { eventEnvelope, type Envelope } from './envelopes.js';
export type { SocketDelivery } from './socket-mode.js';
