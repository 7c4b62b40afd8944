// Line diffs of an agent's edit, for its card in the conversation view:
// how many lines it added and removed, and the changed lines with a little
// context, as unified-diff hunks. Pure: no vscode, no DOM.

export interface DiffLine {
  op: ' ' | '+' | '-';
  text: string;
}

export interface Hunk {
  /** 1-based first line of the hunk in the old and the new text. */
  oldStart: number;
  newStart: number;
  lines: DiffLine[];
}

export interface DiffSummary {
  added: number;
  removed: number;
  hunks: Hunk[];
  /** The texts were too far apart to diff line by line: shown as replaced. */
  coarse: boolean;
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Above this many cells of the LCS table, the middle shows as replaced. */
const maxCells = 4_000_000;

/** The line operations that turn a into b: common prefix and suffix, LCS in between. */
export function lineOps(a: readonly string[], b: readonly string[]): { ops: DiffLine[]; coarse: boolean } {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const ops: DiffLine[] = a.slice(0, pre).map((text) => ({ op: ' ', text }));
  let coarse = false;
  if ((am.length + 1) * (bm.length + 1) > maxCells) {
    coarse = true;
    for (const text of am) ops.push({ op: '-', text });
    for (const text of bm) ops.push({ op: '+', text });
  } else {
    // lcs[i][j]: the LCS length of am[i:] and bm[j:], in one flat array.
    const w = bm.length + 1;
    const lcs = new Uint32Array((am.length + 1) * w);
    for (let i = am.length - 1; i >= 0; i--) {
      for (let j = bm.length - 1; j >= 0; j--) {
        lcs[i * w + j] = am[i] === bm[j] ? (lcs[(i + 1) * w + j + 1] ?? 0) + 1 : Math.max(lcs[(i + 1) * w + j] ?? 0, lcs[i * w + j + 1] ?? 0);
      }
    }
    let i = 0;
    let j = 0;
    while (i < am.length || j < bm.length) {
      if (i < am.length && j < bm.length && am[i] === bm[j]) {
        ops.push({ op: ' ', text: am[i++] ?? '' });
        j++;
      } else if (j < bm.length && (i === am.length || (lcs[i * w + j + 1] ?? 0) >= (lcs[(i + 1) * w + j] ?? 0))) {
        ops.push({ op: '+', text: bm[j++] ?? '' });
      } else {
        ops.push({ op: '-', text: am[i++] ?? '' });
      }
    }
    // Removals read better before the additions they replace.
    reorder(ops, pre);
  }
  for (const text of a.slice(a.length - suf)) ops.push({ op: ' ', text });
  return { ops, coarse };
}

/** Within each run of changes, puts the removed lines first. */
function reorder(ops: DiffLine[], from: number): void {
  let k = from;
  while (k < ops.length) {
    if (ops[k]?.op === ' ') {
      k++;
      continue;
    }
    let end = k;
    while (end < ops.length && ops[end]?.op !== ' ') end++;
    const run = ops.slice(k, end);
    const sorted = [...run.filter((o) => o.op === '-'), ...run.filter((o) => o.op === '+')];
    ops.splice(k, run.length, ...sorted);
    k = end;
  }
}

/** The diff of an edit: counts and hunks with `context` lines around each change. */
export function diffSummary(oldText: string | null, newText: string, context = 3): DiffSummary {
  const { ops, coarse } = lineOps(splitLines(oldText ?? ''), splitLines(newText));
  const hunks: Hunk[] = [];
  let added = 0;
  let removed = 0;
  let oldLine = 1;
  let newLine = 1;
  let current: Hunk | undefined;
  let lastChange = 0;
  const at: { old: number; new: number }[] = [];
  for (const o of ops) {
    at.push({ old: oldLine, new: newLine });
    if (o.op !== '+') oldLine++;
    if (o.op !== '-') newLine++;
  }
  for (let k = 0; k < ops.length; k++) {
    const o = ops[k];
    if (o === undefined) continue;
    if (o.op === ' ') continue;
    if (o.op === '+') added++;
    else removed++;
    if (current !== undefined && k - lastChange - 1 <= 2 * context) {
      current.lines.push(...ops.slice(lastChange + 1, k));
    } else {
      current?.lines.push(...ops.slice(lastChange + 1, lastChange + 1 + context));
      const from = Math.max(0, k - context);
      current = { oldStart: at[from]?.old ?? 1, newStart: at[from]?.new ?? 1, lines: ops.slice(from, k) };
      hunks.push(current);
    }
    current.lines.push(o);
    lastChange = k;
  }
  if (current !== undefined) current.lines.push(...ops.slice(lastChange + 1, lastChange + 1 + context));
  return { added, removed, hunks, coarse };
}

/** The hunks as unified-diff text (without file headers). */
export function unifiedText(summary: DiffSummary): string {
  return summary.hunks
    .map((h) => {
      const oldCount = h.lines.filter((l) => l.op !== '+').length;
      const newCount = h.lines.filter((l) => l.op !== '-').length;
      return [`@@ -${h.oldStart},${oldCount} +${h.newStart},${newCount} @@`, ...h.lines.map((l) => `${l.op}${l.text}`)].join('\n');
    })
    .join('\n');
}

export type RevertPlan = { kind: 'revert'; text: string } | { kind: 'ask'; text: string; reason: string } | { kind: 'delete' } | { kind: 'askDelete'; reason: string };

/**
 * What reverting an edit does to a file whose text is now `current`
 * (undefined: the file is gone): put oldText back, or delete a file the
 * edit created; ask first when the file changed since the edit.
 */
export function planRevert(current: string | undefined, oldText: string | null, newText: string): RevertPlan {
  const changed = current !== newText;
  const reason = current === undefined ? 'The file no longer exists.' : 'The file changed since the agent\'s edit; those later changes would be lost.';
  if (oldText === null) return changed ? { kind: 'askDelete', reason } : { kind: 'delete' };
  return changed ? { kind: 'ask', text: oldText, reason } : { kind: 'revert', text: oldText };
}
