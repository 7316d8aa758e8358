// When a broker feed connects again after a failure: exponential back-off from `first` to `max`, with
// jitter (half to all of the step) so that replicas and restarts do not reconnect in step.
export class ReconnectSchedule {
  /** Failures since the last good connection: the back-off's exponent. */
  private attempt = 0;
  /** Reconnections made since the feed started, for status. */
  reconnects = 0;
  private timer: NodeJS.Timeout | undefined;

  /** `random`: the jitter's source, in [0, 1) (tests fix it). */
  constructor(
    private readonly backOffMs: { first: number; max: number },
    private readonly random: () => number = Math.random,
  ) {}

  /** The attempt number of the next failure, for logs. */
  get attempts(): number {
    return this.attempt;
  }

  get pending(): boolean {
    return this.timer !== undefined;
  }

  /** `connect` after the next back-off step (replacing one already scheduled). */
  after(connect: () => void): void {
    const { first, max } = this.backOffMs;
    const delay = Math.min(max, first * 2 ** this.attempt) * (0.5 + this.random() * 0.5);
    this.attempt += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.reconnects += 1;
      connect();
    }, delay);
    this.timer.unref();
  }

  /** A connection worked: the next failure starts from the first step. */
  succeeded(): void {
    this.attempt = 0;
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
