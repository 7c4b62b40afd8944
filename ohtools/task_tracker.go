package ohtools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/oh-bridge/oh-bridge/pytext"
)

// Task is one TaskItem of the task list.
type Task struct {
	Title  string `json:"title"`
	Notes  string `json:"notes"`
	Status string `json:"status"` // todo, in_progress, done
}

var taskStatuses = []string{"todo", "in_progress", "done"}

// taskTracker is TaskTrackerExecutor, kept in memory for the agent's
// lifetime.
type taskTracker struct {
	mu   sync.Mutex
	list []Task
}

// TaskTrackerTool is the task tracker's name.
const TaskTrackerTool = "task_tracker"

var _ = declare(Spec[*TaskTrackerArgs]{
	Name:        TaskTrackerTool,
	Description: taskTrackerDescription,
	Schema:      taskTrackerSchema,
	Annotations: Annotations{IdempotentHint: true},
	Card:        CardPlan,
	Parse:       parseTaskTrackerArgs,
	Run: func(_ context.Context, tb *Toolbox, args *TaskTrackerArgs, _ func(Progress)) (*Observation, error) {
		return tb.tasks.run(args), nil
	},
})

// TaskTrackerArgs is TaskTrackerAction.
type TaskTrackerArgs struct {
	Command  string `json:"command"` // view or plan
	TaskList []Task `json:"task_list"`
}

// Action changes nothing outside the agent: no permission is asked.
func (t *TaskTrackerArgs) Action() Action {
	return Action{Kind: "think", Title: "update the task list"}
}

// Card is the list a plan sets.
func (t *TaskTrackerArgs) Card() Card {
	if t.Command != "plan" {
		return Card{}
	}
	return Card{Plan: t.TaskList, SetsPlan: true}
}

func parseTaskTrackerArgs(raw json.RawMessage) (*TaskTrackerArgs, error) {
	v, err := checkArguments(TaskTrackerTool, taskTrackerModel, raw)
	if err != nil {
		return nil, err
	}
	t := &TaskTrackerArgs{Command: "view", TaskList: []Task{}}
	if c := v.str("command"); c != nil {
		t.Command = *c
	}
	if tasks, ok := v["task_list"].([]Task); ok {
		t.TaskList = tasks
	}
	return t, nil
}

// taskTrackerModel is TaskTrackerAction's pydantic model.
var taskTrackerModel = actionModel{name: "TaskTrackerAction", fields: []actionField{
	{name: "command", typ: tLiteral, literals: []string{"view", "plan"}},
	{name: "task_list", typ: tTaskList},
}}

func (t *taskTracker) run(args *TaskTrackerArgs) *Observation {
	t.mu.Lock()
	defer t.mu.Unlock()
	var obs *Observation
	switch args.Command {
	case "plan":
		t.list = args.TaskList
		obs = textObservation(fmt.Sprintf("Task list has been updated with %d item(s).", len(t.list)))
	default: // view
		if len(t.list) == 0 {
			obs = textObservation(`No task list found. Use the "plan" command to create one.`)
		} else {
			obs = textObservation(formatTasks(t.list))
		}
	}
	obs.Tasks = append([]Task{}, t.list...)
	return obs
}

// formatTasks is TaskTrackerExecutor._format_task_list.
func formatTasks(tasks []Task) string {
	icons := map[string]string{"todo": "⏳", "in_progress": "🔄", "done": "✅"}
	var b strings.Builder
	b.WriteString("# Task List\n\n")
	for i, task := range tasks {
		icon, ok := icons[task.Status]
		if !ok {
			icon = "⏳"
		}
		fmt.Fprintf(&b, "%d. %s %s\n", i+1, icon, task.Title)
		if task.Notes != "" {
			fmt.Fprintf(&b, "   %s\n", task.Notes)
		}
		b.WriteString("\n")
	}
	return pytext.Strip(b.String())
}

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
