// Unit tests of incremental document sync (docsync.ts): VS Code's change
// events become textDocument/didChange params that, applied the way the
// bridge applies them, turn the old text into the new one; and the same
// through the real compiled bridge (OH_BRIDGE_BIN).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bridge, type EditorHost } from '../src/bridge';
import { didChangeParams, type DocumentChangeEvent, type DocumentContentChange, type DocumentPosition } from '../src/docsync';
import type { DidChangeParams, TextRange } from '../src/protocol.gen';

const binary = process.env.OH_BRIDGE_BIN ?? '';

/**
 * Applies didChange params to text as the bridge does (handlers/documents.go):
 * each change in order, to the text the one before left; lines end at
 * "\r\n", "\r" or "\n"; characters are UTF-16 code units (which JS strings
 * index); a character past its line's end is the line's end, a line past
 * the last is the end of the text, a position inside a surrogate pair is
 * before it; a change without a range replaces the whole text.
 */
function applyLikeBridge(text: string, p: DidChangeParams): string {
  for (const c of p.contentChanges ?? []) {
    if (c.range === undefined || c.range === null) {
      text = c.text ?? '';
      continue;
    }
    let start = offsetOf(text, c.range.start);
    let end = offsetOf(text, c.range.end);
    if (end < start) [start, end] = [end, start];
    text = text.slice(0, start) + (c.text ?? '') + text.slice(end);
  }
  return text;
}

function offsetOf(text: string, pos: DocumentPosition): number {
  let i = 0;
  for (let line = 0; line < pos.line; line++) {
    const m = /\r\n|\r|\n/.exec(text.slice(i));
    if (m === null) return text.length;
    i += m.index + m[0].length;
  }
  const lineEnd = /\r|\n/.exec(text.slice(i));
  const end = lineEnd === null ? text.length : i + lineEnd.index;
  let at = Math.min(i + pos.character, end);
  const code = text.charCodeAt(at - 1);
  if (at > i && at < end && code >= 0xd800 && code <= 0xdbff) at--; // inside a surrogate pair
  return at;
}

/** The position of a UTF-16 offset, counting lines as VS Code does. */
function positionOf(text: string, offset: number): DocumentPosition {
  let line = 0;
  let lineStart = 0;
  const re = /\r\n|\r|\n/g;
  for (let m = re.exec(text); m !== null && m.index + m[0].length <= offset; m = re.exec(text)) {
    line++;
    lineStart = m.index + m[0].length;
  }
  return { line, character: offset - lineStart };
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * A document that edits itself as VS Code does and reports each edit with
 * a change event: ranges in the text before the event, last first (so each
 * applies to the text the one before left), and the version one higher.
 */
class FakeDocument {
  version = 1;
  constructor(
    public text: string,
    readonly uri = 'file:///work/doc.txt',
  ) {}

  edit(...edits: Edit[]): DocumentChangeEvent {
    const sorted = [...edits].sort((a, b) => b.start - a.start);
    const contentChanges: DocumentContentChange[] = sorted.map((e) => ({
      range: { start: positionOf(this.text, e.start), end: positionOf(this.text, e.end) },
      text: e.text,
    }));
    for (const e of sorted) this.text = this.text.slice(0, e.start) + e.text + this.text.slice(e.end);
    this.version++;
    return { document: { uri: { toString: () => this.uri }, version: this.version }, contentChanges };
  }

  /** Typing s at offset, one event per character, as a person does. */
  type(offset: number, s: string): DocumentChangeEvent[] {
    return [...s].map((ch) => {
      const e = this.edit({ start: offset, end: offset, text: ch });
      offset += ch.length; // an emoji is two UTF-16 code units
      return e;
    });
  }
}

const range = (l1: number, c1: number, l2: number, c2: number): TextRange => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

void test('didChange params: the uri, the version after the event, each change as a range and its text', () => {
  // What VS Code passes carries more (rangeOffset, rangeLength, Range's methods): only LSP's fields go.
  const vscodeLike = {
    document: { uri: { toString: () => 'file:///w/a.ts', fsPath: '/w/a.ts' }, version: 7, getText: () => 'whole' },
    contentChanges: [
      { range: { ...range(2, 1, 2, 3), isEmpty: false }, rangeOffset: 40, rangeLength: 2, text: 'xy' },
      { range: range(0, 0, 0, 0), rangeOffset: 0, rangeLength: 0, text: '// ' },
    ],
  };
  assert.deepEqual(didChangeParams(vscodeLike), {
    textDocument: { uri: 'file:///w/a.ts', version: 7 },
    contentChanges: [
      { range: range(2, 1, 2, 3), text: 'xy' },
      { range: range(0, 0, 0, 0), text: '// ' },
    ],
  });
});

void test('didChange params: an event without content changes (only the dirty state) sends nothing', () => {
  assert.equal(didChangeParams({ document: { uri: { toString: () => 'file:///w/a.ts' }, version: 3 }, contentChanges: [] }), undefined);
});

void test('didChange params: a keystroke in a 5 MB document is a few dozen bytes, not the document', () => {
  const doc = new FakeDocument('x'.repeat(100) + '\n'.repeat(5 << 20));
  const [e] = doc.type(50, 'a');
  const sent = JSON.stringify(didChangeParams(e));
  assert.ok(sent.length < 200, sent);
});

void test('the generated changes, applied as the bridge does, give the editor\'s new text', () => {
  const cases: { name: string; text: string; events: (d: FakeDocument) => DocumentChangeEvent[] }[] = [
    { name: 'typing in the middle', text: 'function f() {\n  return 1;\n}\n', events: (d) => d.type(25, ' + 2') },
    { name: 'typing after an emoji and accents (UTF-16)', text: 'naïve 🙂 café\nnext\n', events: (d) => d.type(13, ' au lait 😀!') },
    { name: 'replacing an emoji', text: 'a🙂b', events: (d) => [d.edit({ start: 1, end: 3, text: '😀😀' })] },
    { name: 'CRLF lines', text: 'one\r\ntwo\r\nthree\r\n', events: (d) => [...d.type(8, '!'), d.edit({ start: 3, end: 5, text: ' ' }), d.edit({ start: 0, end: 0, text: 'zero\r\n' })] },
    { name: 'lone CR line ends', text: 'a\rb\rc', events: (d) => [...d.type(3, 'B'), d.edit({ start: 5, end: 5, text: '\r' })] },
    { name: 'several changes in one event (multi-cursor)', text: 'x1\nx2\nx3\n', events: (d) => [d.edit({ start: 0, end: 0, text: '> ' }), d.edit({ start: 5, end: 5, text: '> ' }), d.edit({ start: 0, end: 0, text: '#' }, { start: 5, end: 5, text: '#' }, { start: 10, end: 10, text: '#' })] },
    { name: 'several changes on one line (multi-cursor)', text: 'ab cd ef\n', events: (d) => [d.edit({ start: 2, end: 2, text: 'X' }, { start: 5, end: 5, text: 'Y' }, { start: 6, end: 8, text: '' })] },
    { name: 'a multi-line paste and a deletion across lines', text: 'head\nbody\ntail\n', events: (d) => [d.edit({ start: 5, end: 5, text: 'pasted 1\r\npasted 2\n' }), d.edit({ start: 2, end: 20, text: '' })] },
    { name: 'at the end of the file', text: 'last line', events: (d) => [...d.type(9, '\nmore'), d.edit({ start: 14, end: 14, text: '\n' }), ...d.type(15, 'end')] },
    { name: 'into an empty file', text: '', events: (d) => d.type(0, 'hello\nworld') },
    { name: 'backspacing', text: 'abc🙂\n', events: (d) => [d.edit({ start: 3, end: 5, text: '' }), d.edit({ start: 2, end: 3, text: '' })] },
    { name: 'an end-of-line change (VS Code replaces the whole text)', text: 'a\nb\n', events: (d) => [d.edit({ start: 0, end: 4, text: 'a\r\nb\r\n' })] },
  ];
  for (const tc of cases) {
    const doc = new FakeDocument(tc.text);
    let bridgeText = tc.text;
    let version = doc.version;
    for (const e of tc.events(doc)) {
      const p = didChangeParams(e);
      assert.ok(p !== undefined, tc.name);
      assert.equal(p.textDocument?.version, ++version, tc.name);
      bridgeText = applyLikeBridge(bridgeText, p);
    }
    assert.equal(bridgeText, doc.text, tc.name);
  }
});

/** A small seeded generator, so a failure repeats. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

void test('random edits of mixed line ends and emoji, applied as the bridge does, give the editor\'s text', () => {
  const rand = prng(42);
  const pieces = ['a', 'bc', 'é', '🙂', ' ', '\n', '\r\n', 'xyz'];
  const randText = (n: number): string => Array.from({ length: n }, () => pieces[Math.floor(rand() * pieces.length)]).join('');
  // A boundary VS Code would give: not inside a surrogate pair or a "\r\n".
  const boundary = (text: string): number => {
    let at = Math.floor(rand() * (text.length + 1));
    const code = text.charCodeAt(at - 1);
    if ((code >= 0xd800 && code <= 0xdbff) || (text[at - 1] === '\r' && text[at] === '\n')) at--;
    return at;
  };
  for (let n = 0; n < 200; n++) {
    const doc = new FakeDocument(randText(Math.floor(rand() * 30)));
    let bridgeText = doc.text;
    for (let k = 0; k < 20; k++) {
      // Edits apart from each other, as cursors make them (touching ones merge).
      const points = Array.from({ length: 2 * (1 + Math.floor(rand() * 3)) }, () => boundary(doc.text)).sort((a, b) => a - b);
      const edits: Edit[] = [];
      for (let i = 0; i < points.length; i += 2) {
        if (i > 0 && points[i] <= points[i - 1]) continue;
        edits.push({ start: points[i], end: points[i + 1], text: randText(Math.floor(rand() * 3)) });
      }
      const before = doc.text;
      const p = didChangeParams(doc.edit(...edits));
      if (p === undefined) continue;
      bridgeText = applyLikeBridge(bridgeText, p);
      assert.equal(bridgeText, doc.text, `text ${JSON.stringify(before)}, edits ${JSON.stringify(edits)}`);
    }
  }
});

/** A host that answers nothing: this test sends only notifications. */
const quietHost: EditorHost = {
  applyEdit: () => Promise.resolve({ applied: false }),
  requestPermission: () => Promise.resolve({ outcome: { outcome: 'cancelled' } }),
  showMessage: () => undefined,
  log: () => undefined,
  progress: () => undefined,
};

void test('the real bridge holds the editor\'s text after incremental changes', { skip: binary === '' && 'OH_BRIDGE_BIN is not set' }, async () => {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ext-docsync-')));
  const bridge = new Bridge({ binary, folders: [ws], host: quietHost, env: { HOME: ws } });
  try {
    await bridge.start();
    const file = path.join(ws, 'doc.txt');
    const opened = 'naïve 🙂 café\r\nsecond line\r\n'.repeat(1000);
    fs.writeFileSync(file, opened);
    const doc = new FakeDocument(opened, pathToFileURL(file).href);
    await bridge.notify('textDocument/didOpen', { textDocument: { uri: doc.uri, languageId: 'plaintext', version: doc.version, text: opened } });
    const middle = opened.length / 2;
    const events = [
      ...doc.type(middle + 8, ' typed 😀'),
      doc.edit({ start: 0, end: 0, text: '> ' }, { start: middle, end: middle, text: '> ' }),
      doc.edit({ start: doc.text.length, end: doc.text.length, text: 'the end' }),
    ];
    for (const e of events) {
      const p = didChangeParams(e);
      if (p !== undefined) await bridge.notify('textDocument/didChange', p);
    }
    const read = await bridge.request('fs/read_text_file', { path: 'doc.txt' });
    assert.equal(read.content, doc.text);
    assert.equal(fs.readFileSync(file, 'utf8'), opened, 'the disk is left alone');
  } finally {
    await bridge.stop();
    fs.rmSync(ws, { recursive: true, force: true });
  }
});
