// When the bridge crashes, restart it with a growing delay, and give up
// after too many crashes in a short time (VS Code's own rule for language
// servers is 5 crashes in 3 minutes).
export interface RestartOptions {
  maxCrashes: number;
  windowMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const defaultRestartOptions: RestartOptions = {
  maxCrashes: 5,
  windowMs: 180_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
};

export type RestartDecision = { restart: true; delayMs: number } | { restart: false; reason: string };

export class RestartPolicy {
  private crashes: number[] = [];

  constructor(private readonly opts: RestartOptions = defaultRestartOptions) {}

  /** Records a crash at time now (ms) and says what to do. */
  onCrash(now: number): RestartDecision {
    this.crashes = this.crashes.filter((t) => now - t < this.opts.windowMs);
    this.crashes.push(now);
    const n = this.crashes.length;
    if (n > this.opts.maxCrashes) {
      const minutes = Math.round(this.opts.windowMs / 60_000);
      return {
        restart: false,
        reason: `The OpenHands bridge crashed ${n} times in ${minutes} minutes; it will not be restarted. See "OpenHands: Show Bridge Log", then reload the window.`,
      };
    }
    return { restart: true, delayMs: Math.min(this.opts.baseDelayMs * 2 ** (n - 1), this.opts.maxDelayMs) };
  }

  /** Forgets earlier crashes, after the bridge ran well for a while. */
  reset(): void {
    this.crashes = [];
  }
}
