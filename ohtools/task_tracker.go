package ohtools

import (
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
	v, err := checkArguments(TaskTrackerTool, taskTrackerModel, raw)
	if err != nil {
		return nil, err
	}
	t := &taskTrackerArgs{command: "view", tasks: []Task{}}
	if c := v.str("command"); c != nil {
		t.command = *c
	}
	if tasks, ok := v["task_list"].([]Task); ok {
		t.tasks = tasks
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
