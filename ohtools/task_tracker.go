package ohtools

import (
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

type taskTrackerArgs struct {
	command string
	tasks   []Task
}

func parseTaskTrackerArgs(raw []byte) (*taskTrackerArgs, error) {
	a, err := parseArgs(TaskTrackerTool, raw)
	if err != nil {
		return nil, err
	}
	t := &taskTrackerArgs{command: "view", tasks: []Task{}}
	if c, err := a.str("command"); err != nil {
		return nil, err
	} else if c != nil {
		t.command = *c
	}
	if err := a.oneOf("command", t.command, "view", "plan"); err != nil {
		return nil, err
	}
	v, ok := a.value("task_list")
	if !ok {
		return t, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, a.fail("`task_list` must be a list of tasks, not " + jsonType(v))
	}
	for i, item := range items {
		// TaskItem ignores names it does not know, as pydantic's default.
		var m map[string]json.RawMessage
		if json.Unmarshal(item, &m) != nil {
			return nil, a.fail(fmt.Sprintf("`task_list[%d]` must be an object with a title, not %s", i, jsonType(item)))
		}
		ta := &args{tool: TaskTrackerTool, raw: a.raw, m: m}
		field := func(name string) string { return fmt.Sprintf("task_list[%d].%s", i, name) }
		title, err := ta.str("title")
		if err != nil || title == nil {
			return nil, a.fail(fmt.Sprintf("`%s` is required and must be a string", field("title")))
		}
		task := Task{Title: *title, Status: "todo"}
		if notes, err := ta.str("notes"); err != nil {
			return nil, a.fail(fmt.Sprintf("`%s` must be a string", field("notes")))
		} else if notes != nil {
			task.Notes = *notes
		}
		if st, err := ta.str("status"); err != nil {
			return nil, a.fail(fmt.Sprintf("`%s` must be a string", field("status")))
		} else if st != nil {
			task.Status = *st
		}
		if err := ta.oneOf(field("status"), task.Status, taskStatuses...); err != nil {
			return nil, err
		}
		t.tasks = append(t.tasks, task)
	}
	return t, nil
}

func (t *taskTracker) run(args *taskTrackerArgs) *Observation {
	t.mu.Lock()
	defer t.mu.Unlock()
	var obs *Observation
	switch args.command {
	case "plan":
		t.list = args.tasks
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
