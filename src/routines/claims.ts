/**
 * Claims of routine firings: a firing (routine id and scheduled time) is
 * claimed atomically before it runs, so that no restart, retry or second
 * instance runs it twice. A claim only has to outlive the ways back to its
 * firing: a timer that fires late is checked against the routine's next
 * firing, and catch-up after downtime reaches back `routines.catchUpWindow`;
 * so a claim expires after that window and a margin, and the store does not
 * keep one per firing for ever.
 */
import type { Config } from '../config/schema.js';
import type { Claims } from '../deployment/types.js';
import { parseDuration } from './schedule.js';

/** How much longer than the catch-up window a claim is kept. */
export const CLAIM_MARGIN_MS = 3_600_000;
/** The catch-up window when the configured one cannot be read. */
const DEFAULT_CATCH_UP_MS = 3_600_000;

/** The id of one firing: the same on every instance and after every restart. */
export function firingId(routineId: string, at: number): string {
  return `${routineId}_${at}`;
}

/** `routines.catchUpWindow` in milliseconds. */
export function catchUpWindowMs(config: Config['routines']): number {
  return parseDuration(config.catchUpWindow) ?? DEFAULT_CATCH_UP_MS;
}

/** How long a claim is kept: the catch-up window and a margin. */
export function claimTtlMs(config: Config['routines']): number {
  return catchUpWindowMs(config) + CLAIM_MARGIN_MS;
}

/** Claims a firing once, atomically, among every process that shares the store (the deployment's claims). */
export type FiringClaims = Claims;

/** The name of the firings' claims (a namespace of the store, or a prefix in Redis). */
export const FIRING_CLAIMS = 'routine-claims';
