package ohtools

import (
	"encoding/json"
	"strings"
)

// Tool names, as openhands-tools registers them.
const (
	TerminalTool    = "terminal"
	FileEditorTool  = "file_editor"
	TaskTrackerTool = "task_tracker"
)

// Definition is a tool as an agent sees it: OpenHands' ToolDefinition.to_mcp_tool
// without the output schema.
type Definition struct {
	Name        string
	Description string
	// InputSchema is the action's JSON schema as Schema.to_mcp_schema
	// renders it (titles, defaults and bounds dropped, optional fields
	// without null), key order kept.
	InputSchema json.RawMessage
	Annotations Annotations
}

// Annotations are MCP's tool hints; OpenHands sets all four on its tools.
type Annotations struct {
	Title           string
	ReadOnlyHint    bool
	DestructiveHint bool
	IdempotentHint  bool
	OpenWorldHint   bool
}

// Definitions returns the three tools for an agent working in workingDir
// (file_editor's description names it, as OpenHands' does).
func Definitions(workingDir string) []Definition {
	return []Definition{
		{
			Name:        TerminalTool,
			Description: terminalDescription,
			InputSchema: json.RawMessage(terminalSchema),
			Annotations: Annotations{Title: TerminalTool, DestructiveHint: true, OpenWorldHint: true},
		},
		{
			Name:        FileEditorTool,
			Description: strings.ReplaceAll(fileEditorDescription, "{working_dir}", workingDir),
			InputSchema: json.RawMessage(fileEditorSchema),
			Annotations: Annotations{Title: FileEditorTool, DestructiveHint: true},
		},
		{
			Name:        TaskTrackerTool,
			Description: taskTrackerDescription,
			InputSchema: json.RawMessage(taskTrackerSchema),
			Annotations: Annotations{IdempotentHint: true},
		},
	}
}

// The input schemas. Field names, types, enums, required fields and field
// descriptions are openhands-tools' (TerminalAction, FileEditorAction,
// TaskTrackerAction and TaskItem); fixtures/openhands-v1/tools.json holds
// the snapshot they are tested against.
const terminalSchema = `{
  "type": "object",
  "description": "Schema for terminal command execution.",
  "properties": {
    "command": {
      "type": "string",
      "description": "The shell command to execute. Can be empty string to view additional logs when the previous exit code is ` + "`-1`" + `. Can be a special key name when ` + "`is_input`" + ` is True: ` + "`C-c`" + ` (Ctrl+C), ` + "`C-d`" + ` (Ctrl+D/EOF), ` + "`C-z`" + ` (Ctrl+Z), or any ` + "`C-<letter>`" + ` for Ctrl sequences; navigation keys ` + "`UP`, `DOWN`, `LEFT`, `RIGHT`, `HOME`, `END`, `PGUP`, `PGDN`" + `; and ` + "`TAB`, `ESC`, `BS`" + ` (Backspace), ` + "`ENTER`" + `. You can only execute one command at a time. Use the platform-appropriate shell syntax described in the tool description when chaining commands."
    },
    "is_input": {
      "type": "boolean",
      "description": "If True, the command is an input to the running process. If False, the command is executed in the terminal session. Default is False."
    },
    "timeout": {
      "type": "number",
      "description": "Optional. Sets a maximum time limit (in seconds) for running the command. If the command takes longer than this limit, you’ll be asked whether to continue or stop it. If you don’t set a value, the command will instead pause and ask for confirmation when it produces no new output for 30 seconds. Use a higher value if the command is expected to take a long time (like installation or testing), or if it has a known fixed duration (like sleep)."
    },
    "reset": {
      "type": "boolean",
      "description": "If True, reset the terminal by creating a new session. Use this only when the terminal becomes unresponsive. Note that all previously set environment variables and session state will be lost after reset. Cannot be used with is_input=True."
    }
  },
  "required": ["command"]
}`

const fileEditorSchema = `{
  "type": "object",
  "description": "Schema for file editor operations.",
  "properties": {
    "command": {
      "type": "string",
      "description": "The commands to run. Allowed options are: ` + "`view`, `create`, `str_replace`, `insert`, `undo_edit`" + `.",
      "enum": ["view", "create", "str_replace", "insert", "undo_edit"]
    },
    "path": {
      "type": "string",
      "description": "Absolute path to file or directory."
    },
    "file_text": {
      "type": "string",
      "description": "Required parameter of ` + "`create`" + ` command, with the content of the file to be created."
    },
    "old_str": {
      "type": "string",
      "description": "Required parameter of ` + "`str_replace`" + ` command containing the string in ` + "`path`" + ` to replace."
    },
    "new_str": {
      "type": "string",
      "description": "Optional parameter of ` + "`str_replace`" + ` command containing the new string (if not given, no string will be added). Required parameter of ` + "`insert`" + ` command containing the string to insert."
    },
    "insert_line": {
      "type": "integer",
      "description": "Required parameter of ` + "`insert`" + ` command. The ` + "`new_str`" + ` will be inserted AFTER the line ` + "`insert_line`" + ` of ` + "`path`" + `."
    },
    "view_range": {
      "type": "array",
      "items": {"type": "integer"},
      "description": "Optional parameter of ` + "`view`" + ` command when ` + "`path`" + ` points to a file. If none is given, the full file is shown. If provided, the file will be shown in the indicated line number range, e.g. [11, 12] will show lines 11 and 12. Indexing at 1 to start. Setting ` + "`[start_line, -1]`" + ` shows all lines from ` + "`start_line`" + ` to the end of the file."
    }
  },
  "required": ["command", "path"]
}`

const taskTrackerSchema = `{
  "type": "object",
  "description": "An action where the agent writes or updates a task list for task management.",
  "properties": {
    "command": {
      "type": "string",
      "description": "The command to execute. ` + "`view`" + ` shows the current task list. ` + "`plan`" + ` creates or updates the task list based on provided requirements and progress. Always ` + "`view`" + ` the current list before making changes.",
      "enum": ["view", "plan"]
    },
    "task_list": {
      "type": "array",
      "description": "The full task list. Required parameter of ` + "`plan`" + ` command.",
      "items": {
        "type": "object",
        "properties": {
          "title": {"type": "string", "description": "A brief title for the task."},
          "notes": {"type": "string", "description": "Additional details or notes about the task."},
          "status": {
            "type": "string",
            "description": "The current status of the task. One of 'todo', 'in_progress', or 'done'.",
            "enum": ["todo", "in_progress", "done"]
          }
        },
        "required": ["title"]
      }
    }
  }
}`

// The tool descriptions are ours, with the same content as OpenHands' own:
// the rules the agent must follow and what each tool shows it.

const terminalDescription = "Run a shell command in a persistent terminal session (the user can watch it live).\n" +
	"\n" +
	"### Running commands\n" +
	"* One command at a time. To run several in sequence, chain them with `&&` or `;`.\n" +
	"* The session persists: environment variables, virtual environments and the working directory carry over to later commands.\n" +
	"* Soft timeout: a command that prints nothing new for 30 seconds returns with exit code `-1` and keeps running, unless you set `timeout`.\n" +
	"* Do NOT use `set -e`, `set -eu` or `set -euo pipefail`: they can end the session.\n" +
	"\n" +
	"### Long-running commands\n" +
	"* Run commands that never end (servers, watchers) in the background with their output redirected to a file, e.g. `python3 app.py > server.log 2>&1 &`.\n" +
	"* Give long commands a `timeout`.\n" +
	"* Exit code `-1` means the command is still running. With `is_input=true` you can then:\n" +
	"  - send an empty `command` to see more of its output;\n" +
	"  - send text to its standard input;\n" +
	"  - send `C-c`, `C-d`, `C-z` or any other `C-<letter>` key, such as `C-a`, `C-e` or `C-l`;\n" +
	"  - send `UP`, `DOWN`, `LEFT`, `RIGHT`, `TAB`, `ESC`, `BS`, `HOME`, `END`, `PGUP` or `PGDN`.\n" +
	"\n" +
	"### Good practice\n" +
	"* Check that a parent directory exists before creating files or directories in it.\n" +
	"* Prefer absolute paths to frequent `cd`.\n" +
	"\n" +
	"### Output\n" +
	"* Very long output is shortened before it is returned.\n" +
	"\n" +
	"### Reset\n" +
	"* `reset=true` starts a fresh session when the terminal stops responding.\n" +
	"* A reset loses environment variables, working directory changes and running processes."

const fileEditorDescription = "View, create and edit plain-text files.\n" +
	"* State persists between calls and across the conversation.\n" +
	"* `view` on a text file shows it numbered, as `cat -n` does; on a directory it lists the files and directories up to 2 levels deep, hidden ones excluded; on an image (.png, .jpg, .jpeg, .gif, .webp, .bmp) it shows the image.\n" +
	"* `create` cannot overwrite: it fails when `path` already exists as a file.\n" +
	"* Output that is too long is cut and marked with `<response clipped>`.\n" +
	"* `undo_edit` reverts the last edit made to the file at `path`.\n" +
	"\n" +
	"Before using this tool:\n" +
	"1. View the file first, to understand its content and context.\n" +
	"2. Before creating a file, view the parent directory to check that it exists and is the right place.\n" +
	"\n" +
	"When editing:\n" +
	"   - Keep the code idiomatic and correct; never leave it broken.\n" +
	"   - Always use absolute paths (starting with /).\n" +
	"\n" +
	"RULES FOR str_replace:\n" +
	"\n" +
	"1. EXACT MATCH: `old_str` must match one or more consecutive lines of the file exactly, whitespace and indentation included. Nothing is replaced when it matches nowhere or in more than one place.\n" +
	"\n" +
	"2. UNIQUE: `old_str` must occur exactly once. Include enough context around the change (3-5 lines) to make it unique.\n" +
	"\n" +
	"3. REPLACEMENT: `new_str` holds the edited lines that replace `old_str`; the two must differ.\n" +
	"\n" +
	"To make several edits to one file, send them together: several calls to this tool in one message.\n" +
	"\n" +
	"Your current working directory is: {working_dir}\n" +
	"When exploring the project, start from this directory rather than the root of the filesystem."

const taskTrackerDescription = "Keep a structured task list for multi-step development work: plan it, track progress and show the user where the work stands.\n" +
	"\n" +
	"## When to use it\n" +
	"1. Work with several phases or parts, or complex changes across components.\n" +
	"2. When the user asks for a plan or lists several things to do.\n" +
	"3. At the start of a project, to capture the requirements.\n" +
	"4. Before starting a task: mark it in_progress, one task at a time.\n" +
	"5. When a task is finished: mark it done, and add tasks for work that turned up.\n" +
	"\n" +
	"## When not to use it\n" +
	"A single small task, a trivial change, or a question to answer: just do it.\n" +
	"\n" +
	"## Commands\n" +
	"* `view` shows the current list. View it before changing it.\n" +
	"* `plan` replaces the list with `task_list`, the full list with every task's current status.\n" +
	"\n" +
	"## Statuses\n" +
	"* todo: not started\n" +
	"* in_progress: being worked on now (keep one at a time)\n" +
	"* done: completely finished\n" +
	"\n" +
	"## Rules\n" +
	"* Update statuses as the work moves; mark a task done as soon as it is, and only when it fully is: never while tests fail, the implementation is incomplete, errors remain or something needed is missing. Keep it in_progress instead, and add tasks for what blocks it.\n" +
	"* Remove tasks that no longer apply.\n" +
	"* Write short, precise, actionable titles; split large work into manageable tasks; put details in `notes`.\n" +
	"\n" +
	"When unsure, use the tool: an up-to-date plan shows the user a systematic approach."
