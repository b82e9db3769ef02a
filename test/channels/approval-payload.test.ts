import { describe, expect, it } from 'vitest';
import { ACTION_VIEWS, decodeApprovalPayload, encodeApprovalPayload } from '../../src/channels/approval-payload.js';
import { approvalOutcomeLine, approvalPromptText } from '../../src/channels/approval-text.js';
import type { PromptAction } from '../../src/channels/types.js';

const ACTIONS = Object.keys(ACTION_VIEWS) as PromptAction[];

describe('prompt payloads', () => {
  it.each(ACTIONS)('round-trips %s through a short payload', (action) => {
    const payload = encodeApprovalPayload('Ab3_-xYz9', action);
    expect(payload).toMatch(/^pa:Ab3_-xYz9:[a-z]$/);
    expect(decodeApprovalPayload(payload)).toEqual({ approvalId: 'Ab3_-xYz9', action });
  });

  it('gives every action its own letter', () => {
    const keys = ACTIONS.map((action) => ACTION_VIEWS[action].key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each(['pa:abc:q', 'pa:abc:yy', 'pa::y', 'px:abc:y', 'pa:a b:y', `pa:${'x'.repeat(41)}:y`])('refuses %s', (payload) => {
    expect(decodeApprovalPayload(payload)).toBeUndefined();
  });
});

describe('prompt text', () => {
  const base = { id: 'p1', summary: 'The same search ran 3 times.', requestedBy: { id: '1', name: 'Ada' }, expiresAt: Date.now() + 5 * 60_000 };

  it('shows a question without a tool or arguments as its title and summary only', () => {
    const text = approvalPromptText({ ...base, title: 'Am I going in circles?', actions: ['continue', 'stop', 'redirect'] });
    expect(text.split('\n')).toEqual(['**Am I going in circles?**', 'The same search ran 3 times.', 'Only Ada can answer. Expires in 5 min.']);
  });

  it('says what an expiry counts as', () => {
    expect(approvalOutcomeLine({ decision: 'expired' })).toBe('⌛ Expired (treated as denied)');
    expect(approvalOutcomeLine({ decision: 'expired', expiredAs: 'stop' })).toBe('⌛ Expired (treated as stop)');
    expect(approvalOutcomeLine({ decision: 'redirected', by: 'Ada' })).toBe('↪️ Trying another way by Ada');
  });
});
