// The VS Code terminal that mirrors one of the bridge's agent terminals
// (terminal/did_output), so the person watches the agent's commands live.
import * as vscode from 'vscode';

/**
 * MirrorTerminal is a Pseudoterminal fed by terminal/did_output. VS Code
 * drops what is written before it opens the terminal, so output waits in
 * a buffer until then.
 */
export class MirrorTerminal {
  private readonly emitter = new vscode.EventEmitter<string>();
  private readonly names = new vscode.EventEmitter<string>();
  private pending: string[] | undefined = [];
  // VS Code ignores a new name fired before open(): it waits here.
  private pendingName: string | undefined;
  readonly pty: vscode.Pseudoterminal;

  constructor(actions: { input: (data: string) => void; resize: (cols: number, rows: number) => void; close: () => void }) {
    this.pty = {
      onDidWrite: this.emitter.event,
      onDidChangeName: this.names.event,
      open: () => {
        const pending = this.pending ?? [];
        this.pending = undefined;
        for (const d of pending) this.emitter.fire(d);
        if (this.pendingName !== undefined) this.names.fire(this.pendingName);
        this.pendingName = undefined;
      },
      close: actions.close,
      handleInput: actions.input,
      setDimensions: (d) => actions.resize(d.columns, d.rows),
    };
  }

  rename(name: string): void {
    if (this.pending !== undefined) this.pendingName = name;
    else this.names.fire(name);
  }

  /** Writes raw terminal bytes; a bare \n also returns the carriage. */
  write(data: string): void {
    const d = data.replace(/(?<!\r)\n/g, '\r\n');
    if (this.pending !== undefined) this.pending.push(d);
    else this.emitter.fire(d);
  }
}
