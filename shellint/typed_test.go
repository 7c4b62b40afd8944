package shellint

import (
	"strings"
	"testing"
)

func TestTypable(t *testing.T) {
	typed := []string{
		"echo hi",
		"cd sub && ls -la | grep x; echo done",
		"[ ! -f /x ] && echo missing",
		"[[ a != b ]]",
		`sleep 1 & wait "$!"`,
		"echo ${!HOM*} ${#PATH}",
		"a=1 b='two words'",
		"echo 'a; b' \"c\\\"d\"",
		"f() { echo in-f; }; f",
		"for i in 1 2; do echo $i; done",
		"echo hi!",
		"echo\ttab",
		"echo $(date) `pwd`",
	}
	for _, text := range typed {
		if !typable(text, false) {
			t.Errorf("typable(%q) = false, want true", text)
		}
	}
	eval := []string{
		"",
		"   ",
		"echo 'unterminated",
		`echo "a!b"`,
		"!!",
		"echo !ec",
		"^a^b",
		"echo a \\",
		"cat <<EOF",
		"echo hi |",
		"if true",
		"f() {",
		"echo a\necho b",
		"echo a\r",
		"echo \x03",
		"echo \x7f",
		"source venv/bin/activate",
		". ~/.nvm/nvm.sh",
		"eval \"$(starship init bash)\"",
		"exec bash",
		"builtin source x",
		"command . x",
		"cd x && source y",
		"PROMPT_COMMAND=",
		"unset PROMPT_COMMAND",
		"echo $__br_nonce",
		strings.Repeat("x", maxInlineLine+1),
	}
	for _, text := range eval {
		if typable(text, false) {
			t.Errorf("typable(%q) = true, want false", text)
		}
	}
	if !typable("echo ${PIPESTATUS[@]}", false) || typable("echo ${PIPESTATUS[@]}", true) {
		t.Error("PIPESTATUS: typed after a typed command, through eval after an eval'd one")
	}
}
