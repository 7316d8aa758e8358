// What each upstream last did, for /api/system/status. Reads state; never calls an upstream.
import { ApiError } from '../errors.js';

export interface UpstreamState {
  calls: number;
  errors: number;
  lastSuccessAt: string | null;
  lastError: { at: string; code: string; message: string } | null;
}

/** Told of every tracked call (metrics histograms hang off it). */
export type UpstreamCallObserver = (upstream: string, ms: number, error?: unknown) => void;

export class UpstreamHealth {
  private readonly states = new Map<string, UpstreamState>();
  observer: UpstreamCallObserver | undefined;

  state(upstream: string): UpstreamState {
    let state = this.states.get(upstream);
    if (state === undefined) {
      state = { calls: 0, errors: 0, lastSuccessAt: null, lastError: null };
      this.states.set(upstream, state);
    }
    return state;
  }

  recordSuccess(upstream: string): void {
    const state = this.state(upstream);
    state.calls += 1;
    state.lastSuccessAt = new Date().toISOString();
  }

  recordError(upstream: string, error: unknown): void {
    const state = this.state(upstream);
    state.calls += 1;
    state.errors += 1;
    const safe = error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', 'unexpected failure');
    state.lastError = { at: new Date().toISOString(), code: safe.code, message: safe.message };
  }

  /** Runs one upstream call and records how it went. */
  async track<T>(upstream: string, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await call();
      this.recordSuccess(upstream);
      this.observer?.(upstream, performance.now() - started);
      return result;
    } catch (error) {
      this.recordError(upstream, error);
      this.observer?.(upstream, performance.now() - started, error);
      throw error;
    }
  }

  all(): Record<string, UpstreamState> {
    return Object.fromEntries(this.states);
  }
}
