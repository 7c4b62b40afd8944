package shellint

// The integration scripts are static. The per-terminal nonce arrives on
// file descriptor 3 (startProc), which the script reads into an
// unexported shell variable and closes before any user file runs: no
// environment block holds it (a process's stays readable in
// /proc/<pid>/environ for its whole life, whatever the shell unsets) and
// no child inherits the descriptor, so a command's child processes cannot
// learn it and forge the end of a command. Markers are:
//
//	C;<nonce>;<seq>        the shell has read the whole line and runs it
//	P;Cwd=<dir>;<nonce>    working directory (value escaped as VS Code does)
//	D;<exit>;<nonce>;<tag> a command finished with <exit>
//	A;<nonce>              prompt start: the shell waits for a line
//	B                      prompt end
//
// bash 5.1 and later without a line editor run in typed mode (typed.go):
// PS1 itself is P, D, A, the user's prompt and B, and D's tag is "f10"
// (our prompt hook ran) or "f00" (it did not). bash prints the prompt for
// every line it reads, so the first D after a line is submitted ends that
// command, and plain commands are typed as they are: bash keeps $?, $_,
// PIPESTATUS and the history entry itself, and writes HISTFILE on exit.
// PS0, which bash prints once it has read and parsed a line and before it
// runs it, starts with C, tagged "f" instead of a seq. Our hook is the
// last PROMPT_COMMAND entry; it costs one test a prompt and wraps PS1 and
// PS0 again when a command changed them (venv's activate).
//
// C tells the bridge that the shell holds the whole line: a Ctrl-C
// before it can find bash between reading the line and parsing it, when
// bash drops the characters it parsed so far, prints a prompt (a D of
// 130) and then runs the rest of the line (interrupt.go). The eval line
// prints C itself, in every mode.
//
// Everything else (zsh, older bash, line editing, and in typed mode the
// texts typed.go turns away) goes through the eval line below. Outside
// typed mode the last prompt hook prints P, D (tag: the seq), A, the user's
// prompt (expanded by the shell: bash ${PS1@P}, zsh ${(%%)PS1}) and B in
// one write, and leaves PS1 empty. One write means the end of a command
// and the prompt reach the bridge together, after every other hook ran; an
// empty PS1 means the prompt bash shows after a syntax error (decoded
// before the hooks ran) cannot lack the markers. While a command runs PS1
// is the user's again, so commands that read or extend it (venv's
// activate) see theirs.
//
// The eval line is one line the tty does not echo (the bridge clears ECHO
// for it; the mirror shows the command text instead, mirror.go). It
// inlines everything it can, because each shell function call costs
// microseconds (see docs/terminal-speed.md):
//
//	 PS1="$__br_user_ps1" __br_seq=<seq> __br_st= __br_la="$_" __br_c=$'<text>';
//	 builtin history -s -- "$__br_c";
//	 builtin printf '\033]633;C;%s;%s\007' "$__br_nonce" <seq>;
//	 builtin eval -- "$__br_pre$__br_c$__br_post";
//	 __br_fin "${__br_st:-$?}" "$__br_la"
//
// (one line; zsh: print -s, and $_ comes from __br_la, since zsh's hooks
// overwrite it; typed bash starts with __br_ec=$? __br_ps=(PIPESTATUS)
// instead of PS1 and seq, and passes the seq to __br_fin, which prints P
// and D itself). PS1 is the user's again while the command runs. The
// eval'd string is
//
//	__br_rs "$__br_ec" "$__br_la";<text>
//	__br_st=$? __br_ps=("${PIPESTATUS[@]}") __br_la=$_
//
// so the text starts with the previous command's $? and $_ (zsh sets $_ to
// eval's argument otherwise) and its own $?, PIPESTATUS and $_ are
// captured, not the machinery's (typed bash keeps them in __br_eps). A
// text that reads PIPESTATUS also gets $__br_pp in front, a pipeline of
// __br_rs rebuilding the last one. eval runs the text at top level, so
// variables, functions, traps, options and jobs land in the shell itself.
// A syntax error stops eval before the capture and eval's own status (2 in
// bash, 1 in zsh) stands. __br_fin re-arms the hooks (the command may have
// replaced PROMPT_COMMAND or precmd_functions) and hands $? and, as its
// last argument, $_ on. A text too long for one tty line (canonical mode
// keeps 4095 bytes) is written to a file and read by __br_rd instead of
// $'<text>'. The cwd is baked into P escaped so that no character in it
// can end or split the marker.

// readNonce takes the nonce from descriptor 3 and closes it (plain exec:
// behind builtin, bash would close it for that command only). Nothing
// has run yet that could have defined a function named read or exec.
const readNonce = `__br_nonce=""
{ IFS= builtin read -r __br_nonce <&3; } 2>/dev/null
exec 3<&-
`

// sharedVars are the state both shells' integrations start from.
const sharedVars = `__br_seq=""
__br_ec=0
__br_st=""
__br_ps=()
__br_pp=""
__br_la=""
__br_c=""
__br_e=""
__br_user_ps1=""
__br_lpwd=""
__br_pcwd=""
`

// sharedFuncs are the functions both shells define alike: __br_rs sets
// $? (and, with a second argument, $_), __br_esc escapes a value for an
// OSC 633 property into __br_e as VS Code's deserializeMessage expects,
// __br_rd reads a command too long for one tty line from its file.
const sharedFuncs = `__br_rs() { builtin return "$1"; }
__br_esc() {
  builtin local s="$1"
  s="${s//\\/\\x5c}"
  s="${s//;/\\x3b}"
  s="${s//\$/\\x24}"
  s="${s//$'\x60'/\\x60}"
  s="${s//\%/\\x25}"
  s="${s//\!/\\x21}"
  s="${s//$'\a'/\\x07}"
  s="${s//$'\e'/\\x1b}"
  s="${s//$'\n'/\\x0a}"
  s="${s//$'\r'/\\x0d}"
  __br_e="$s"
}
__br_rd() { __br_c=""; IFS= builtin read -r -d '' __br_c < "$1" || :; }
`

const bashIntegration = `# oh-bridge shell integration for bash. Generated; removed with the terminal.
if [[ -n "${__br_loaded:-}" ]]; then builtin return; fi
__br_loaded=1
` + readNonce + `__br_norc="${BR_NORC:-}"
__br_dir="${BR_DIR:-}"
__br_editing="${BR_EDITING:-}"
builtin unset BR_NORC BR_DIR BR_EDITING
` + sharedVars + `__br_user_pc=""
if [[ -z "$__br_norc" && -r ~/.bashrc ]]; then builtin source ~/.bashrc; fi
# Never exported, whatever the user's file did (export, declare -x).
builtin declare +x __br_nonce
` + sharedFuncs + `if [[ -z "$__br_editing" ]] && (( BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1) )); then
# Typed mode (bash 5.1+, no line editor). The markers are part of PS1, so
# bash itself prints them with the prompt it prints for a person, and a
# command can be typed as it is: bash keeps $?, $_, PIPESTATUS and history
# across it natively (5.1 restores them around each PROMPT_COMMAND entry).
# The bridge types the plain lines (typed.go) and wraps the rest in the
# eval line as in classic mode. D's last field is "f" and two digits: 1 if
# our hook ran before this prompt, then the 0 that resets it.
__br_k=0
__br_eps=()
__br_ps1=""
__br_c0='\e]633;C;${__br_nonce};f\a'
__br_ps0="$__br_c0" # not yet PS0: __br_fix puts it there
__br_pfx='\[\e]633;P;Cwd=${__br_pcwd};${__br_nonce}\a\e]633;D;$?;${__br_nonce};f$((__br_k))$((__br_k=0))\a\e]633;A;${__br_nonce}\a\]'
__br_sfx='\[\e]633;B\a\]'
# The hook is the last PROMPT_COMMAND entry, after the user's (which may
# set PS1 or PS0): one test a prompt unless one of them or the directory
# changed.
__br_hook='__br_k=1;[[ "$PS1" == "$__br_ps1" && "$PS0" == "$__br_ps0" && "$PWD" == "$__br_lpwd" ]] || __br_fix'
# __br_fix wraps PS1 again around whatever prompt is now the user's (venv's
# activate prepends to the wrapped one, deactivate restores an old one),
# puts C back in front of the user's PS0, and escapes a new cwd for P once.
__br_fix() {
  if [[ "$PS1" != "$__br_ps1" ]]; then
    builtin local u="${PS1//"$__br_pfx"/}"
    u="${u//"$__br_sfx"/}"
    [[ "$u" != '\s-\v\$ ' ]] || u='\u@\h:\w\$ '
    __br_ps1="$__br_pfx$u$__br_sfx"
    PS1="$__br_ps1" PS2=''
  fi
  if [[ "$PS0" != "$__br_ps0" ]]; then
    __br_ps0="$__br_c0${PS0//"$__br_c0"/}"
    PS0="$__br_ps0"
  fi
  if [[ "$PWD" != "$__br_lpwd" ]]; then __br_lpwd="$PWD"; __br_esc "$PWD"; __br_pcwd="$__br_e"; fi
}
__br_arm() {
  builtin local n=${#PROMPT_COMMAND[@]} e
  if (( n > 0 )) && [[ "${PROMPT_COMMAND[n-1]}" == "$__br_hook" ]]; then builtin return 0; fi
  builtin local -a pc
  for e in "${PROMPT_COMMAND[@]}"; do [[ "$e" == "$__br_hook" || -z "$e" ]] || pc+=("$e"); done
  PROMPT_COMMAND=("${pc[@]}" "$__br_hook")
}
# The eval line's last word: re-arm the hook (the command may have
# replaced PROMPT_COMMAND), print P and D for its seq ($2), hand back $? and, as
# the last argument, $_. The prompt's own D cannot serve here: when eval
# hits EOF inside a quote, bash 5.2 shows a prompt expanded before the line
# ran (its $? and variables are the previous prompt's).
__br_fin() {
  __br_arm
  [[ "$PWD" == "$__br_lpwd" ]] || __br_fix
  builtin printf '\033]633;P;Cwd=%s;%s\007\033]633;D;%s;%s;%s\007' "$__br_pcwd" "$__br_nonce" "$1" "$__br_nonce" "$2"
  builtin return "$1"
}
# __br_mkpp builds the pipeline that rebuilds PIPESTATUS from its
# arguments, for an eval'd text that reads it.
__br_mkpp() {
  __br_pp=""
  if (( $# > 1 )); then
    builtin local st
    for st; do __br_pp+="${__br_pp:+|}__br_rs $st"; done
    __br_pp+=";"
  fi
}
__br_pre='__br_rs "$__br_ec" "$__br_la";'
__br_post=$'\n''__br_st=$? __br_eps=("${PIPESTATUS[@]}") __br_la=$_'
__br_fix
__br_arm
else
# Classic mode (older bash, or a line editor): the prompt hook prints the
# markers; every command goes through the eval line.
# The line's last word: re-arm the hooks (the command may have replaced
# them), hand back $? and, as the last argument, $_.
__br_fin() { [[ "${PROMPT_COMMAND-}" == __br_precmd ]] || __br_arm; builtin return "$1"; }
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
# The prompt hook runs before every prompt: it is written for speed, as few
# simple commands and function calls as it can (each costs microseconds).
__br_D=$'\033]633;D;'
__br_bel=$'\007'
__br_precmd() {
  __br_ec=$?
  if [[ -n "$__br_user_pc" ]]; then __br_rs "$__br_ec"; builtin eval "$__br_user_pc"; fi
  [[ "${PROMPT_COMMAND-}" == __br_precmd && "${#PROMPT_COMMAND[@]}" == 1 ]] || __br_arm
  # Only a pipeline sets PIPESTATUS, and its stages fork: __br_pp rebuilds
  # it, and the bridge puts that in front of a command only if the command
  # reads PIPESTATUS.
  __br_pp=""
  if (( ${#__br_ps[@]} > 1 )); then
    builtin local st
    for st in "${__br_ps[@]}"; do __br_pp+="${__br_pp:+|}__br_rs $st"; done
    __br_pp+=";"
  fi
  if [[ -n "$PS1" ]]; then
    __br_user_ps1="$PS1"
    [[ "$PS1" != '\s-\v\$ ' ]] || __br_user_ps1='\u@\h:\w\$ '
  fi
  [[ "$PWD" == "$__br_lpwd" ]] || { __br_lpwd="$PWD"; __br_esc "$PWD"; __br_pcwd="$__br_e"; }
  [[ "$__br_user_ps1" != *'$?'* ]] || __br_rs "$__br_ec"
  __br_p="${__br_user_ps1@P}" PS1='' PS2='' __br_ps=()
  [[ "$__br_p" != *[$'\001\002']* ]] || __br_p="${__br_p//[$'\001\002']/}"
  builtin printf '\033]633;P;Cwd=%s;%s\007%s\033]633;A;%s\007%s\033]633;B\007' "$__br_pcwd" "$__br_nonce" \
    "${__br_seq:+$__br_D$__br_ec;$__br_nonce;$__br_seq$__br_bel}" "$__br_nonce" "$__br_p"
  __br_seq=""
  builtin return "$__br_ec"
}
# __br_pre and __br_post wrap a command's text for eval: the text starts
# with the previous command's $? and $_, and its own are captured after it.
__br_pre='__br_rs "$__br_ec" "$__br_la";'
__br_post=$'\n''__br_st=$? __br_ps=("${PIPESTATUS[@]}") __br_la=$_'
__br_arm
builtin set +o history
fi
# Readline reads input one byte per syscall and echoes each byte; without it
# the tty hands bash the whole submitted line at once (~1 ms per command).
if [[ -z "$__br_editing" ]]; then builtin set +o emacs +o vi; fi
`

// zsh reads $ZDOTDIR/.zshenv then $ZDOTDIR/.zshrc; ZDOTDIR points at our
// directory and each file sources the user's own first (from the user's
// ZDOTDIR or HOME), then hands ZDOTDIR back so nested zsh processes behave
// normally.
const zshEnvIntegration = `# oh-bridge shell integration for zsh (.zshenv). Generated.
` + readNonce + `__br_norc="${BR_NORC:-}"
__br_dir="${BR_DIR:-}"
__br_editing="${BR_EDITING:-}"
__br_zdot="$ZDOTDIR"
__br_user_zdot_set="${BR_USER_ZDOTDIR+1}"
ZDOTDIR="${BR_USER_ZDOTDIR:-$HOME}"
builtin unset BR_NORC BR_DIR BR_EDITING BR_USER_ZDOTDIR
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
# Never exported, whatever the user's files did (export, ALL_EXPORT).
builtin typeset +x __br_nonce
` + sharedVars + `` + sharedFuncs + `# The line's last word: re-arm the hooks (the command may have replaced
# them), hand back $? and, as the last argument, $_.
__br_fin() { __br_arm; builtin return "$1"; }
# First hook: remember $? before other hooks run. Last hook: the prompt.
__br_precmd_status() { __br_ec=$?; }
__br_precmd() {
  if [[ -n "$PS1" ]]; then
    __br_user_ps1="$PS1"
    if [[ "$PS1" == '%m%# ' ]]; then __br_user_ps1='%n@%m:%~%# '; fi
  fi
  PS1=''
  PS2=''
  RPS1=''
  RPROMPT=''
  PROMPT_EOL_MARK=''
  __br_pp=""
  if (( ${#__br_ps[@]} > 1 )); then
    builtin local st
    for st in "${__br_ps[@]}"; do __br_pp+="${__br_pp:+|}__br_rs $st"; done
    __br_pp+=";"
  fi
  __br_ps=()
  if [[ "$PWD" != "$__br_lpwd" ]]; then __br_lpwd="$PWD"; __br_esc "$PWD"; __br_pcwd="$__br_e"; fi
  builtin local p
  __br_rs "$__br_ec"
  p="${(%%)__br_user_ps1}"
  if [[ -n "$__br_seq" ]]; then
    builtin printf '\033]633;P;Cwd=%s;%s\007\033]633;D;%s;%s;%s\007\033]633;A;%s\007%s\033]633;B\007' \
      "$__br_pcwd" "$__br_nonce" "$__br_ec" "$__br_nonce" "$__br_seq" "$__br_nonce" "$p"
  else
    builtin printf '\033]633;P;Cwd=%s;%s\007\033]633;A;%s\007%s\033]633;B\007' "$__br_pcwd" "$__br_nonce" "$__br_nonce" "$p"
  fi
  __br_seq=""
  __br_rs "$__br_ec"
}
__br_arm() {
  if [[ "${precmd_functions[1]-}" != __br_precmd_status || "${precmd_functions[-1]-}" != __br_precmd ]]; then
    precmd_functions=(__br_precmd_status ${precmd_functions:#__br_precmd*} __br_precmd)
  fi
}
__br_pre='__br_rs "$__br_ec" "$__br_la";'
__br_post=$'\n''__br_st=$? __br_ps=("${pipestatus[@]}") __br_la=$_'
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
