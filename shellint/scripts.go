package shellint

// The integration scripts are static: the per-session nonce arrives in the
// environment (BR_NONCE) and is moved into a shell variable before any user
// file runs, so child processes never see it. Markers are:
//
//	C;<nonce>;<seq>        output of command <seq> starts
//	P;Cwd=<dir>;<nonce>    working directory (value escaped as VS Code does)
//	D;<exit>;<nonce>;<seq> command <seq> finished with <exit>
//	A;<nonce>              prompt start (shell ready), inside PS1
//
// A command is submitted as one line that sources a file:
//
//	__br_go <seq>;builtin . "$__br_dir/c<seq>";__br_fin
//
// __br_fin emits P and D when the file finishes. If Ctrl-C aborts the line,
// __br_fin never runs and the prompt hook emits them instead, with $? = 130.
// Both re-install the hook and the prompt so a command or rc file that
// replaces PROMPT_COMMAND/PS1 (venv, starship, a custom PS1) cannot silence
// the markers for the next command.

const bashIntegration = `# oh-bridge shell integration for bash. Generated; removed with the terminal.
if [[ -n "${__br_loaded:-}" ]]; then builtin return; fi
__br_loaded=1
__br_nonce="${BR_NONCE:-}"
__br_norc="${BR_NORC:-}"
__br_dir="${BR_DIR:-}"
__br_editing="${BR_EDITING:-}"
builtin unset BR_NONCE BR_NORC BR_DIR BR_EDITING
__br_seq=""
__br_user_pc=""
__br_in_precmd=""
if [[ -z "$__br_norc" && -r ~/.bashrc ]]; then builtin source ~/.bashrc; fi
__br_status() { builtin return "$1"; }
__br_cwd() {
  builtin local s="$PWD"
  s="${s//\\/\\\\}"
  s="${s//;/\\x3b}"
  s="${s//$'\a'/\\x07}"
  s="${s//$'\e'/\\x1b}"
  s="${s//$'\n'/\\x0a}"
  builtin printf '\033]633;P;Cwd=%s;%s\007' "$s" "$__br_nonce"
}
__br_end() {
  __br_cwd
  builtin printf '\033]633;D;%s;%s;%s\007' "$1" "$__br_nonce" "$__br_seq"
  __br_seq=""
}
__br_arm() {
  builtin local e pc=""
  if [[ "${#PROMPT_COMMAND[@]}" == 1 && "${PROMPT_COMMAND[0]}" == __br_precmd ]]; then builtin return 0; fi
  for e in "${PROMPT_COMMAND[@]}"; do
    [[ "$e" == __br_precmd ]] || pc+="${pc:+$'\n'}$e"
  done
  __br_user_pc="$pc"
  builtin unset PROMPT_COMMAND
  PROMPT_COMMAND=__br_precmd
}
__br_precmd() {
  builtin local ec=$?
  if [[ -n "$__br_in_precmd" ]]; then builtin return "$ec"; fi
  __br_in_precmd=1
  if [[ -n "$__br_seq" ]]; then __br_end "$ec"; fi
  if [[ -n "$__br_user_pc" ]]; then __br_status "$ec"; builtin eval "$__br_user_pc"; fi
  __br_arm
  __br_cwd
  PS1='\[\033]633;A;'"$__br_nonce"'\007\]\$ \[\033]633;B\007\]'
  PS2=''
  __br_in_precmd=""
}
__br_go() {
  __br_arm
  __br_seq="$1"
  builtin printf '\033]633;C;%s;%s\007' "$__br_nonce" "$1"
}
__br_fin() {
  builtin local ec=$?
  __br_arm
  __br_end "$ec"
  builtin return "$ec"
}
__br_arm
builtin set +o history
# Readline reads input one byte per syscall and echoes each byte; without it
# the tty hands bash the whole submitted line at once (~1 ms per command).
if [[ -z "$__br_editing" ]]; then builtin set +o emacs +o vi; fi
`

// zsh reads $ZDOTDIR/.zshenv then $ZDOTDIR/.zshrc; ZDOTDIR points at our
// directory and each file sources the user's own first (from the user's
// ZDOTDIR or HOME), then hands ZDOTDIR back so nested zsh processes behave
// normally.
const zshEnvIntegration = `# oh-bridge shell integration for zsh (.zshenv). Generated.
__br_nonce="${BR_NONCE:-}"
__br_norc="${BR_NORC:-}"
__br_dir="${BR_DIR:-}"
__br_editing="${BR_EDITING:-}"
__br_zdot="$ZDOTDIR"
__br_user_zdot_set="${BR_USER_ZDOTDIR+1}"
ZDOTDIR="${BR_USER_ZDOTDIR:-$HOME}"
builtin unset BR_NONCE BR_NORC BR_DIR BR_EDITING BR_USER_ZDOTDIR
if [[ -z "$__br_norc" && -r "$ZDOTDIR/.zshenv" ]]; then builtin source "$ZDOTDIR/.zshenv"; fi
__br_user_zdot="$ZDOTDIR"
ZDOTDIR="$__br_zdot"
`

const zshRcIntegration = `# oh-bridge shell integration for zsh (.zshrc). Generated.
if [[ -n "$__br_user_zdot_set" || "$__br_user_zdot" != "$HOME" ]]; then
  builtin export ZDOTDIR="$__br_user_zdot"
else
  builtin unset ZDOTDIR
fi
if [[ -z "$__br_norc" && -r "${__br_user_zdot}/.zshrc" ]]; then builtin source "${__br_user_zdot}/.zshrc"; fi
__br_seq=""
__br_ec=0
__br_cwd() {
  builtin local s="$PWD"
  s="${s//\\/\\\\}"
  s="${s//;/\\x3b}"
  s="${s//$'\a'/\\x07}"
  s="${s//$'\e'/\\x1b}"
  s="${s//$'\n'/\\x0a}"
  builtin printf '\033]633;P;Cwd=%s;%s\007' "$s" "$__br_nonce"
}
__br_end() {
  __br_cwd
  builtin printf '\033]633;D;%s;%s;%s\007' "$1" "$__br_nonce" "$__br_seq"
  __br_seq=""
}
# First hook: remember $? before other hooks run. Last hook: markers + prompt.
__br_precmd_status() { __br_ec=$?; }
__br_precmd() {
  if [[ -n "$__br_seq" ]]; then __br_end "$__br_ec"; fi
  __br_cwd
  PS1=$'%{\033]633;A;'"$__br_nonce"$'\007%}%# %{\033]633;B\007%}'
  PS2=''
  RPS1=''
  RPROMPT=''
  PROMPT_EOL_MARK=''
}
__br_arm() {
  if [[ "${precmd_functions[1]-}" != __br_precmd_status || "${precmd_functions[-1]-}" != __br_precmd ]]; then
    precmd_functions=(__br_precmd_status ${precmd_functions:#__br_precmd*} __br_precmd)
  fi
}
__br_go() {
  __br_arm
  __br_seq="$1"
  builtin printf '\033]633;C;%s;%s\007' "$__br_nonce" "$1"
}
__br_fin() {
  builtin local ec=$?
  __br_arm
  __br_end "$ec"
  builtin return "$ec"
}
__br_arm
builtin unsetopt PROMPT_SP
builtin setopt HIST_IGNORE_SPACE
# See the bash script: the line editor costs a syscall per submitted byte.
if [[ -z "$__br_editing" ]]; then builtin unsetopt ZLE; fi
`

// fallbackScript runs one command with `bash -c` when the interactive
// integration cannot be brought up. cwd and exported variables are carried
// from one command to the next through files in the run directory, like
// Claude Code's `pwd -P` file.
const fallbackScript = `builtin source %[1]s 2>/dev/null
builtin cd -- %[2]s 2>/dev/null
builtin source %[3]s
__br_ec=$?
builtin pwd -P > %[4]s 2>/dev/null
builtin export -p > %[1]s 2>/dev/null
builtin exit "$__br_ec"
`
