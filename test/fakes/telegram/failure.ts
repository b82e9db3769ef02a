/**
 * An error answer of the fake Bot API, shaped like Telegram's:
 * `{ ok: false, error_code, description, parameters: { retry_after } }`.
 */

/** A failed method call, thrown by the fake's method handlers. */
export class ApiFailure extends Error {
  constructor(
    readonly errorCode: number,
    readonly description: string,
    readonly retryAfter?: number,
  ) {
    super(description);
  }

  /** The JSON body Telegram would send. */
  toBody(): Record<string, unknown> {
    return {
      ok: false,
      error_code: this.errorCode,
      description: this.description,
      ...(this.retryAfter !== undefined ? { parameters: { retry_after: this.retryAfter } } : {}),
    };
  }
}

/**
 * What `failNext` injects: a Telegram error, or a dropped connection (a network
 * error for the client), before the call is carried out or, `processed`, after
 * (the message is sent, its answer lost).
 */
export type InjectedFailure = { error_code: number; description: string; retry_after?: number } | { drop: true; processed?: boolean };
