import { describe, expect, it } from 'vitest';
import { slackApiUrl } from '../../../src/channels/slack/web-api.js';
import { DM_ALICE, startHarness } from './harness.js';

describe('slackApiUrl', () => {
  it('ends the base URL in /api/, adding what is missing', () => {
    expect(slackApiUrl('http://127.0.0.1:9000')).toBe('http://127.0.0.1:9000/api/');
    expect(slackApiUrl('https://proxy.example/slack/')).toBe('https://proxy.example/slack/api/');
    expect(slackApiUrl('https://slack.com/api')).toBe('https://slack.com/api/');
    expect(slackApiUrl('https://slack.com/api/')).toBe('https://slack.com/api/');
    expect(slackApiUrl(undefined)).toBeUndefined();
  });

  it('routes the Web API and Socket Mode through an apiUrl given without /api/', async () => {
    const harness = await startHarness();
    const bare = harness.fake.apiUrl.replace(/\/api\/$/, '');
    await harness.channel.stop();
    const second = await startHarness({ apiUrl: bare }, {}, harness.fake);
    try {
      expect(harness.fake.callsOf('apps.connections.open')).toHaveLength(2);
      await second.channel.send({ channel: 'slack', chatId: DM_ALICE }, 'through the bare URL');
      expect(harness.fake.botMessages(DM_ALICE).map((message) => message.text)).toEqual(['through the bare URL']);
    } finally {
      await second.close();
      await harness.fake.close();
    }
  });
});
