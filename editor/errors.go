package editor

import (
	"errors"

	"github.com/oh-bridge/oh-bridge/workspace"
)

// ToolError kinds. Stable snake_case strings for error.data.kind.
const (
	KindPathNotAbsolute      = "path_not_absolute"
	KindFileExists           = "file_exists"
	KindNotFound             = "not_found"
	KindIsDirectory          = "is_directory"
	KindUnsupportedBinary    = "unsupported_binary" // .pdf, .docx, ...: OHEditor converts them, we do not
	KindMissingParameter     = "missing_parameter"
	KindUnknownCommand       = "unknown_command"
	KindTooLarge             = "too_large"
	KindBinary               = "binary"
	KindInvalidUTF8          = "invalid_utf8"
	KindInvalidViewRange     = "invalid_view_range"
	KindInvalidInsertLine    = "invalid_insert_line"
	KindOldStrNotFound       = "old_str_not_found"
	KindOldStrNotUnique      = "old_str_not_unique"
	KindNewStrEqualsOldStr   = "new_str_equals_old_str"
	KindNoEditHistory        = "no_edit_history"
	KindChangedOutsideEditor = "changed_outside_editor"
	// KindIO is a read or write that failed for a reason with no kind of
	// its own; a disk fault keeps workspace's kind (no_space,
	// read_only_file_system, access_denied, ...), and the ToolError's Err
	// is the *workspace.IOError.
	KindIO = "io_error"
)

// ToolError is an editor failure whose Message is exactly the text OHEditor
// gives for it (OpenHands shows the agent "ERROR:\n" + Message).
type ToolError struct {
	Kind    string
	Message string
	Path    string // the path as shown in Message, if any
	Lines   []int  // KindOldStrNotUnique: the lines of the occurrences
	Err     error  // the underlying error, if any
}

func (e *ToolError) Error() string { return e.Message }

func (e *ToolError) Unwrap() error { return e.Err }

// Data is what a caller may add to a wire error beside the kind and the
// message: the path, the lines of a non-unique old_str, and what package
// workspace reports of the error underneath: for a file that is not text
// its size and limit, or offset; for a disk fault its op and whether the
// old content is unchanged; for a FIFO, socket or device its type.
func (e *ToolError) Data() map[string]any {
	d := map[string]any{}
	if e.Path != "" {
		d["path"] = e.Path
	}
	if len(e.Lines) > 0 {
		d["lines"] = e.Lines
	}
	var notText *workspace.NotTextError
	var fault *workspace.IOError
	var special *workspace.SpecialFileError
	var under interface{ Data() map[string]any }
	switch {
	case errors.As(e.Err, &notText):
		under = notText
	case errors.As(e.Err, &fault):
		under = fault
	case errors.As(e.Err, &special):
		under = special
	}
	if under != nil {
		for k, v := range under.Data() {
			if k != "path" {
				d[k] = v
			}
		}
	}
	return d
}
