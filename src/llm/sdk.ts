/**
 * The openai SDK (about 150 modules, a quarter of a start's loading time),
 * loaded when first needed rather than at start: the provider loads it before
 * its first request, and a start loads it in the background once pincer is
 * running, so a first message rarely waits for it.
 */
import type * as OpenAiSdk from 'openai';

let loading: Promise<typeof OpenAiSdk> | undefined;
let loaded: typeof OpenAiSdk | undefined;

/** The SDK, loading it the first time. */
export function loadSdk(): Promise<typeof OpenAiSdk> {
  return (loading ??= import('openai').then((sdk) => (loaded = sdk)));
}

/**
 * The SDK if it has loaded, else undefined: whatever was thrown before it
 * loaded cannot be one of its errors.
 */
export function loadedSdk(): typeof OpenAiSdk | undefined {
  return loaded;
}
