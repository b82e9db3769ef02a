import { defineScenarioSuite } from './suite.js';
import { createDiscordDriver } from './drivers/discord.js';

defineScenarioSuite(createDiscordDriver);
