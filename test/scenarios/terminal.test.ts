import { defineScenarioSuite } from './suite.js';
import { createTerminalDriver } from './drivers/terminal.js';

defineScenarioSuite(createTerminalDriver);
