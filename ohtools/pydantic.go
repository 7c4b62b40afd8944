package ohtools

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/oh-bridge/oh-bridge/pytext"
)

// An action's pydantic model validating a call's arguments in lax mode,
// and the ValidationError's text, as pydantic-core words it.

// pydanticVersion is the major.minor of the pydantic that the newest
// agent-server lock installs (2.14.4 for 1.58.2); its error texts link to
// its documentation.
const pydanticVersion = "2.14"

// lineError is one error of a pydantic ValidationError.
type lineError struct {
	loc   []string
	typ   string
	msg   string
	input *pyValue
}

// validationText is str(ValidationError).
func validationText(title string, errs []lineError) string {
	var b strings.Builder
	plural := "s"
	if len(errs) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "%d validation error%s for %s", len(errs), plural, title)
	for _, e := range errs {
		fmt.Fprintf(&b, "\n%s\n  %s [type=%s, input_value=%s, input_type=%s]\n    For further information visit https://errors.pydantic.dev/%s/v/%s",
			strings.Join(e.loc, "."), e.msg, e.typ, e.input.shortRepr(), e.input.typeName(), pydanticVersion, e.typ)
	}
	return b.String()
}

// validateAction is model_validate in lax mode: every field checked in
// order, every error kept.
func validateAction(model actionModel, args *pyValue) (actionValues, []lineError) {
	values := actionValues{}
	var errs []lineError
	for _, f := range model.fields {
		v := args.get(f.name)
		if v == nil {
			if f.required {
				errs = append(errs, lineError{[]string{f.name}, "missing", "Field required", args})
			}
			continue
		}
		out, fieldErrs := validateField(f, v, []string{f.name})
		if len(fieldErrs) > 0 {
			errs = append(errs, fieldErrs...)
			continue
		}
		values[f.name] = out
	}
	return values, errs
}

func validateField(f actionField, v *pyValue, loc []string) (any, []lineError) {
	fail := func(typ, msg string) (any, []lineError) {
		return nil, []lineError{{loc, typ, msg, v}}
	}
	switch f.typ {
	case tStr:
		if v.kind != pyStr {
			return fail("string_type", "Input should be a valid string")
		}
		return v.s, nil
	case tBool:
		b, typ, msg := laxBool(v)
		if typ != "" {
			return fail(typ, msg)
		}
		return b, nil
	case tNumber:
		n, typ, msg := laxFloat(v)
		if typ != "" {
			return fail(typ, msg)
		}
		if !(n >= 0) {
			return fail("greater_than_equal", "Input should be greater than or equal to 0")
		}
		return n, nil
	case tInt:
		n, typ, msg := laxInt(v)
		if typ != "" {
			return fail(typ, msg)
		}
		if n.Sign() < 0 {
			return fail("greater_than_equal", "Input should be greater than or equal to 0")
		}
		return clampInt(n), nil
	case tIntList:
		if v.kind != pyList {
			return fail("list_type", "Input should be a valid list")
		}
		out := make([]int, 0, len(v.list))
		var errs []lineError
		for i, item := range v.list {
			n, typ, msg := laxInt(item)
			if typ != "" {
				errs = append(errs, lineError{append(append([]string{}, loc...), strconv.Itoa(i)), typ, msg, item})
				continue
			}
			out = append(out, clampInt(n))
		}
		if len(errs) > 0 {
			return nil, errs
		}
		return out, nil
	case tLiteral:
		if v.kind == pyStr {
			for _, l := range f.literals {
				if v.s == l {
					return l, nil
				}
			}
		}
		return fail("literal_error", "Input should be "+literalList(f.literals))
	case tTaskList:
		return validateTasks(v, loc)
	}
	panic("unknown field type")
}

// literalList is how pydantic lists a Literal's values: 'a', 'b' or 'c'.
func literalList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = pytext.Repr(v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// laxBool is pydantic's bool in lax mode: true and false, 0 and 1 (as
// ints or floats), and the words 0/1, off/on, f/t, false/true, n/y,
// no/yes in any case. typ is the error's type when it is none of those.
func laxBool(v *pyValue) (b bool, typ, msg string) {
	parsing := "Input should be a valid boolean, unable to interpret input"
	switch v.kind {
	case pyBool:
		return v.b, "", ""
	case pyInt:
		switch {
		case v.i.IsInt64() && v.i.Int64() == 0:
			return false, "", ""
		case v.i.IsInt64() && v.i.Int64() == 1:
			return true, "", ""
		}
		return false, "bool_parsing", parsing
	case pyFloat:
		switch {
		case v.f == 0:
			return false, "", ""
		case v.f == 1:
			return true, "", ""
		case !math.IsInf(v.f, 0) && v.f == math.Trunc(v.f):
			return false, "bool_parsing", parsing
		}
	case pyStr:
		switch strings.ToLower(v.s) {
		case "0", "off", "f", "false", "n", "no":
			return false, "", ""
		case "1", "on", "t", "true", "y", "yes":
			return true, "", ""
		}
		return false, "bool_parsing", parsing
	}
	return false, "bool_type", "Input should be a valid boolean"
}

// laxFloat is pydantic's float in lax mode: a number, a boolean, or a
// text that reads as one (blanks around it, "_" between digits, inf and
// nan allowed).
func laxFloat(v *pyValue) (f float64, typ, msg string) {
	switch v.kind {
	case pyFloat:
		return v.f, "", ""
	case pyInt:
		if f, ok := v.float64(); ok {
			return f, "", ""
		}
	case pyBool:
		if v.b {
			return 1, "", ""
		}
		return 0, "", ""
	case pyStr:
		if f, ok := parseFloatText(v.s); ok {
			return f, "", ""
		}
		return 0, "float_parsing", "Input should be a valid number, unable to parse string as a number"
	}
	return 0, "float_type", "Input should be a valid number"
}

var floatTextRE = regexp.MustCompile(`^[+-]?(?i:inf|infinity|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)$`)

func parseFloatText(s string) (float64, bool) {
	s, ok := stripNumberText(s)
	if !ok || !floatTextRE.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return 0, false
	}
	return f, true
}

// stripNumberText trims blanks and takes out underscores, each of which
// must stand between two digits.
func stripNumberText(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "_") {
		return s, true
	}
	digit := func(i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' {
			if !digit(i-1) || !digit(i+1) {
				return "", false
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), true
}

var intTextRE = regexp.MustCompile(`^[+-]?[0-9]+(?:\.0*)?$`)

// laxInt is pydantic's int in lax mode: an int, a boolean, a float with
// no fraction, or a text of digits (blanks around, "_" between digits, a
// fraction of zeros allowed).
func laxInt(v *pyValue) (n *big.Int, typ, msg string) {
	switch v.kind {
	case pyInt:
		return v.i, "", ""
	case pyBool:
		if v.b {
			return big.NewInt(1), "", ""
		}
		return big.NewInt(0), "", ""
	case pyFloat:
		switch {
		case math.IsInf(v.f, 0) || math.IsNaN(v.f):
			return nil, "finite_number", "Input should be a finite number"
		case v.f != math.Trunc(v.f):
			return nil, "int_from_float", "Input should be a valid integer, got a number with a fractional part"
		case v.f >= math.MaxInt64 || v.f < math.MinInt64:
			return nil, "int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size"
		}
		return big.NewInt(int64(v.f)), "", ""
	case pyStr:
		s, ok := stripNumberText(v.s)
		if ok && intTextRE.MatchString(s) {
			whole, _, _ := strings.Cut(s, ".")
			n, _ := new(big.Int).SetString(strings.TrimPrefix(whole, "+"), 10)
			return n, "", ""
		}
		return nil, "int_parsing", "Input should be a valid integer, unable to parse string as an integer"
	}
	return nil, "int_type", "Input should be a valid integer"
}

// clampInt is n as an int; Python's ints have no bound, and a line number
// past the int range is as far out of the file as the largest int.
func clampInt(n *big.Int) int {
	if !n.IsInt64() {
		if n.Sign() < 0 {
			return math.MinInt
		}
		return math.MaxInt
	}
	return int(n.Int64())
}

// taskStatusAliases are the words other agents' todo tools use for
// TaskItem's statuses.
var taskStatusAliases = map[string]string{"pending": "todo", "to_do": "todo", "completed": "done", "complete": "done"}

// validateTasks is list[TaskItem]: each an object with a text title, a
// text notes ("" when absent) and a status ("todo" when absent), the
// status normalized first as TaskItem's validator does (blanks trimmed,
// lower case, "-" and " " as "_", the aliases). Names TaskItem does not
// have are ignored.
func validateTasks(v *pyValue, loc []string) (any, []lineError) {
	if v.kind != pyList {
		return nil, []lineError{{loc, "list_type", "Input should be a valid list", v}}
	}
	tasks := make([]Task, 0, len(v.list))
	var errs []lineError
	for i, item := range v.list {
		at := append(append([]string{}, loc...), strconv.Itoa(i))
		if item.kind != pyDict {
			errs = append(errs, lineError{at, "model_type", "Input should be a valid dictionary or instance of TaskItem", item})
			continue
		}
		task := Task{Status: "todo"}
		before := len(errs)
		field := func(name string) []string { return append(append([]string{}, at...), name) }
		if t := item.get("title"); t == nil {
			errs = append(errs, lineError{field("title"), "missing", "Field required", item})
		} else if t.kind != pyStr {
			errs = append(errs, lineError{field("title"), "string_type", "Input should be a valid string", t})
		} else {
			task.Title = t.s
		}
		if n := item.get("notes"); n != nil {
			if n.kind != pyStr {
				errs = append(errs, lineError{field("notes"), "string_type", "Input should be a valid string", n})
			} else {
				task.Notes = n.s
			}
		}
		if s := item.get("status"); s != nil {
			s = normalizeStatus(s)
			if st, e := validateField(actionField{typ: tLiteral, literals: taskStatuses}, s, field("status")); e != nil {
				errs = append(errs, e...)
			} else {
				task.Status = st.(string)
			}
		}
		if len(errs) == before {
			tasks = append(tasks, task)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return tasks, nil
}

// normalizeStatus is TaskItem._normalize_status: a known status or alias
// after trimming, lower-casing and turning "-" and " " into "_", else the
// value as given.
func normalizeStatus(v *pyValue) *pyValue {
	if v.kind != pyStr {
		return v
	}
	n := strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(pytext.Strip(v.s)))
	for _, s := range taskStatuses {
		if n == s {
			return &pyValue{kind: pyStr, s: n}
		}
	}
	if a, ok := taskStatusAliases[n]; ok {
		return &pyValue{kind: pyStr, s: a}
	}
	return v
}
