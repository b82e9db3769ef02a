import { defineScenarioSuite } from './suite.js';
import { createSlackDriver } from './drivers/slack.js';

defineScenarioSuite(createSlackDriver);
