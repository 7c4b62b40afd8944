// A small, safe Markdown renderer for the conversation view: the subset
// agents write (headings, paragraphs, lists, block quotes, fenced code,
// tables, rules, code spans, emphasis, links). Every character of the
// input is HTML-escaped; the only markup in the output is the renderer's
// own, links are http(s) or mailto only, and nothing is loaded from
// anywhere (images render as their alt text). Pure: no vscode, no DOM.

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** Renders Markdown to HTML. */
export function renderMarkdown(source: string): string {
  // NUL marks the placeholders of code spans below: none may come in.
  const lines = source.replace(/\0/g, '').replace(/\r\n?/g, '\n').split('\n');
  return blocks(lines).join('\n');
}

/** A code block with a Copy button (the view copies the <code>'s text). */
export function codeBlock(code: string, lang = ''): string {
  const cls = lang === '' ? '' : ` class="language-${escapeHtml(lang)}"`;
  return `<div class="code-block"><button type="button" class="copy" data-action="copy" aria-label="Copy code" title="Copy code">Copy</button>` +
    `<pre><code${cls}>${escapeHtml(code)}</code></pre></div>`;
}

const fence = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)[^`]*$/;
const heading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const rule = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const bullet = /^( {0,3})([-*+])\s+(.*)$/;
const ordered = /^( {0,3})(\d{1,9})[.)]\s+(.*)$/;
const quote = /^ {0,3}>\s?(.*)$/;
const tableDivider = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function blocks(lines: string[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    if (line.trim() === '') {
      i++;
      continue;
    }
    const f = fence.exec(line);
    if (f !== null) {
      const marker = f[1] ?? '```';
      const code: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] ?? '').trimStart().startsWith(marker)) code.push(lines[i++] ?? '');
      i++; // the closing fence (or the end)
      out.push(codeBlock(code.join('\n'), f[2] ?? ''));
      continue;
    }
    const h = heading.exec(line);
    if (h !== null) {
      const level = (h[1] ?? '#').length;
      out.push(`<h${level}>${inline(h[2] ?? '')}</h${level}>`);
      i++;
      continue;
    }
    if (rule.test(line)) {
      out.push('<hr>');
      i++;
      continue;
    }
    if (quote.test(line)) {
      const inner: string[] = [];
      while (i < lines.length && quote.test(lines[i] ?? '')) inner.push(quote.exec(lines[i++] ?? '')?.[1] ?? '');
      out.push(`<blockquote>${blocks(inner).join('\n')}</blockquote>`);
      continue;
    }
    if (bullet.test(line) || ordered.test(line)) {
      i = list(lines, i, out);
      continue;
    }
    if (line.includes('|') && tableDivider.test(lines[i + 1] ?? '') && (lines[i + 1] ?? '').includes('-')) {
      i = table(lines, i, out);
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && (lines[i] ?? '').trim() !== '' && !startsBlock(lines[i] ?? '')) para.push((lines[i++] ?? '').trim());
    if (para.length === 0) para.push((lines[i++] ?? '').trim());
    out.push(`<p>${para.map(inline).join('<br>\n')}</p>`);
  }
  return out;
}

function startsBlock(line: string): boolean {
  return fence.test(line) || heading.test(line) || rule.test(line) || quote.test(line) || bullet.test(line) || ordered.test(line);
}

/** One list, its items' continuation lines (indented) rendered as blocks. */
function list(lines: string[], start: number, out: string[]): number {
  const first = lines[start] ?? '';
  const isOrdered = !bullet.test(first);
  const pattern = isOrdered ? ordered : bullet;
  const startNumber = isOrdered ? Number(ordered.exec(first)?.[2] ?? '1') : 1;
  const indent = (pattern.exec(first)?.[1] ?? '').length;
  const items: string[][] = [];
  let i = start;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    const m = pattern.exec(line);
    // A marker indented past the first one's starts a nested list.
    if (m !== null && (m[1] ?? '').length < indent + 2) {
      items.push([m[3] ?? '']);
      i++;
      continue;
    }
    const current = items[items.length - 1];
    if (current === undefined) break;
    if (line.trim() === '') {
      // A blank line goes on the list only if an indented line follows.
      const next = lines[i + 1] ?? '';
      if (/^\s{2,}\S/.test(next)) {
        current.push('');
        i++;
        continue;
      }
      break;
    }
    if (/^\s{2,}\S/.test(line)) {
      current.push(line.replace(/^ {1,4}|^\t/, ''));
      i++;
      continue;
    }
    if (startsBlock(line)) break;
    current.push(line.trim()); // a lazy continuation of the item's text
    i++;
  }
  const tag = isOrdered ? 'ol' : 'ul';
  const attr = isOrdered && startNumber !== 1 ? ` start="${startNumber}"` : '';
  const body = items.map((item) => {
    const inner = blocks(item);
    // A lone paragraph renders tight, without its <p>.
    const tight = inner.length >= 1 && inner[0]?.startsWith('<p>') === true ? [inner[0].slice(3, -4), ...inner.slice(1)] : inner;
    return `<li>${tight.join('\n')}</li>`;
  });
  out.push(`<${tag}${attr}>${body.join('')}</${tag}>`);
  return i;
}

function cells(line: string): string[] {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

function table(lines: string[], start: number, out: string[]): number {
  const head = cells(lines[start] ?? '');
  const aligns = cells(lines[start + 1] ?? '').map((c) => (c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : c.startsWith(':') ? 'left' : ''));
  // A class, not a style attribute: the view's CSP allows no inline styles.
  const style = (k: number): string => (aligns[k] ? ` class="align-${aligns[k]}"` : '');
  let i = start + 2;
  const rows: string[] = [];
  while (i < lines.length && (lines[i] ?? '').includes('|') && (lines[i] ?? '').trim() !== '') {
    const row = cells(lines[i++] ?? '');
    rows.push(`<tr>${head.map((_, k) => `<td${style(k)}>${inline(row[k] ?? '')}</td>`).join('')}</tr>`);
  }
  out.push(`<table><thead><tr>${head.map((c, k) => `<th${style(k)}>${inline(c)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`);
  return i;
}

const safeUrl = /^(https?:\/\/|mailto:)[^\s]*$/i;

/** Inline Markdown: code spans first (their text stays literal), then the rest escaped and marked up. */
export function inline(text: string): string {
  const spans: string[] = [];
  const hold = (html: string): string => `\0${spans.push(html) - 1}\0`;
  let s = text.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, _ticks: string, code: string) => hold(`<code>${escapeHtml(code.replace(/^ (.*) $/, '$1'))}</code>`));
  // Images become their alt text: the view loads nothing.
  s = s.replace(/!\[([^\]]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)/g, (_, alt: string) => hold(escapeHtml(alt)));
  s = s.replace(/\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (whole: string, label: string, url: string) =>
    safeUrl.test(url) ? hold(`<a href="${escapeHtml(url)}">${emphasis(escapeHtml(label))}</a>`) : whole);
  s = s.replace(/<(https?:\/\/[^\s>]+)>/g, (_, url: string) => hold(`<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`));
  s = emphasis(escapeHtml(s));
  // A link's label may hold a code span: restore until none is left.
  for (let k = 0; k < 3 && s.includes('\0'); k++) s = s.replace(/\0(\d+)\0/g, (_, n: string) => spans[Number(n)] ?? '');
  return s;
}

function emphasis(s: string): string {
  return s
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/(^|[^\w*])\*(?=[^\s*])([\s\S]*?[^\s*])\*(?![\w*])/g, '$1<em>$2</em>')
    .replace(/(^|[^\w])_(?=[^\s_])([\s\S]*?[^\s_])_(?!\w)/g, '$1<em>$2</em>')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>');
}
