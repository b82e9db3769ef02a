import { defineScenarioSuite } from './suite.js';
import { createTestChannelDriver } from './drivers/test-channel.js';

defineScenarioSuite(createTestChannelDriver);
