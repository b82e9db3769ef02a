import { defineScenarioSuite } from './suite.js';
import { createTelegramDriver } from './drivers/telegram.js';

defineScenarioSuite(createTelegramDriver);
