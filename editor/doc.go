// Package editor implements OpenHands' file editor tool (OHEditor, the
// str_replace_editor of openhands-aci 0.3.x) on top of package workspace:
// view, create, str_replace, insert and undo_edit, with output texts and
// error messages identical to OHEditor's, so an agent trained on them sees
// no difference.
//
// It owns the OHEditor semantics and the per-file undo history. It must not
// know about JSON-RPC, LSP or the OpenHands event schema: failures are
// *ToolError values whose Message is OHEditor's text (OpenHands shows it
// after "ERROR:\n"; the caller adds that), and workspace errors such as
// *workspace.OutsideRootsError and *workspace.StaleVersionError pass through
// unchanged. All reads and writes go through workspace.FS, so writes are
// atomic, reach open editor buffers, and are tagged as the agent's.
//
// # Paths
//
// OHEditor requires absolute paths. With Options.RequireAbsolutePaths (for
// the OpenHands action layer) a relative path gets OHEditor's exact error,
// including its " Maybe you meant {root}/{path}?" hint when that path exists
// (and, unlike OHEditor, only when it is inside the workspace roots). Without
// it (for the edit/* methods) a relative path is taken relative to the first
// workspace root. Either way the path must resolve inside the roots.
//
// # Deliberate differences from OHEditor
//
//   - Line endings: a file whose dominant line break is CRLF (or CR) keeps
//     it after str_replace and insert; OHEditor rewrites every edited file
//     with "\n". Matching, line numbers and the displayed text use "\n", as
//     in OHEditor, and undo restores the earlier bytes exactly.
//   - Encoding: only UTF-8 is read or written. Other bytes give a
//     KindInvalidUTF8 ToolError naming the offset of the first bad byte,
//     where OHEditor guesses an encoding or crashes with a UnicodeDecodeError
//     (an HTTP 500 in OpenHands). Binary detection is a NUL byte in the
//     first 8 KiB (OHEditor uses binaryornot).
//   - insert after the last line of a file that does not end in "\n" starts
//     a new line; OHEditor appends the text to that last line.
//   - Undo is refused (KindChangedOutsideEditor) when the file was changed
//     by someone else after the editor's last write, and the history of that
//     file is dropped; likewise an edit of such a file first drops the older
//     history. OHEditor would silently overwrite the outside change.
//   - The supported binary formats (.pdf, .docx, ...) are not converted to
//     Markdown on view; the error has OHEditor's conversion-failure wording.
//   - Directory views sort bytewise and follow a symlink only when its target
//     is inside the workspace roots.
//   - Diffs (UnifiedDiff) are computed with Myers' algorithm (go-diff), not
//     difflib; ambiguous edits may be split into hunks differently.
//   - The mode of an edited file is kept (OHEditor's insert leaves it 0600).
//   - str_replace and insert accept an expected version and fail with
//     *workspace.StaleVersionError when the file changed since it was read.
//   - Create with RequireAbsolutePaths off makes missing parent directories.
package editor
