// The command line "Start OpenHands CLI in Terminal" types into a shell.
// The task is the person's selection, often code: it must reach the CLI
// as it is, never read by the shell ($(…), backticks, $VAR, a history
// expansion !), and a task starting with "-" must not read as an option.
// test/cli-commands.json holds the lines typed for given tasks; the
// extension's tests and the Go test that runs the real CLI in a real
// shell (cmd/oh-bridge/real_cli_test.go) both read it.

/**
 * shellQuote is s as one word of a POSIX shell (bash, zsh):
 * single quotes, each ' as '\''. Nothing in single quotes is expanded.
 */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * cliCommand is the line that runs the CLI on task ("" for none), after
 * sourcing the workspace's virtual environment when activate names its
 * activate script. It leaves the LLM to the CLI's own settings: with
 * --override-with-envs and no LLM_API_KEY and LLM_MODEL the CLI exits
 * instead of showing its settings screen to a first-time user.
 */
export function cliCommand(task: string, activate?: string): string {
  const source = activate === undefined ? '' : `source ${shellQuote(activate)} && `;
  return `${source}openhands${task === '' ? '' : ` --task=${shellQuote(task)}`}`;
}
