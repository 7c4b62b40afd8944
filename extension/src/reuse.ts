// Which terminal "Start OpenHands CLI in Terminal" should use: the newest
// idle "OpenHands" terminal when its shell integration says it is idle,
// otherwise a new one. The terminals that mirror the bridge's are never
// reused: the agents' are read-only, and a command typed into any of them
// (the person's, or this one) gets no start mark in the stream VS Code's
// shell integration reads, so such a terminal looks idle while the CLI
// runs in it (cmd/oh-bridge/real_cli_test.go shows it with the real CLI).
export type ReuseStrategy = 'smart' | 'alwaysNew';

export interface TerminalInfo {
  id: number;
  name: string;
  /** Whether it mirrors one of the bridge's terminals. */
  mirror: boolean;
  /** Whether VS Code's shell integration is active in this terminal. */
  hasShellIntegration: boolean;
  /** Whether a command is running (known only with shell integration). */
  busy: boolean;
  createdAt: number;
}

export type ReuseDecision = { reuse: number } | { create: true; reason: string };

export function chooseTerminal(terminals: readonly TerminalInfo[], strategy: ReuseStrategy): ReuseDecision {
  if (strategy === 'alwaysNew') {
    return { create: true, reason: 'openhands.terminal.reuseStrategy is alwaysNew' };
  }
  const ours = terminals.filter((t) => t.name.startsWith('OpenHands') && !t.mirror);
  if (ours.length === 0) {
    return { create: true, reason: 'no OpenHands terminal is open' };
  }
  // Without shell integration a terminal's state is unknown: never type into it.
  const known = ours.filter((t) => t.hasShellIntegration);
  if (known.length === 0) {
    return { create: true, reason: 'the OpenHands terminals have no shell integration' };
  }
  const idle = known.filter((t) => !t.busy).sort((a, b) => b.createdAt - a.createdAt);
  const newest = idle[0];
  if (newest === undefined) {
    return { create: true, reason: 'every OpenHands terminal is busy' };
  }
  return { reuse: newest.id };
}
