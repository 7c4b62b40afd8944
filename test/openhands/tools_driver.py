"""Runs tool calls through openhands-tools' own executors, in process, the
way the agent-server's agent runs an LLM's tool call, and prints the text
the LLM would be sent for each.

The path is the SDK's own, called, not copied: Agent._get_action_event
turns the call's JSON into an action (parse_tool_call_arguments,
normalize_tool_call, fix_malformed_tool_arguments, the security_risk and
summary fields taken out, then the action's pydantic validation; a
failure is the AgentErrorEvent "Error validating tool ..."),
Agent._execute_action_event runs the tool under
ParallelToolExecutor._run_safe (an exception is "Error executing tool
..."), and the event's to_llm_message() is what the LLM reads. Those two
methods run on a stand-in for the agent that has only what they touch:
the tools and the helpers they call. The conversation they pass the tools
is a stand-in too, with what the tools read of it: a secret registry,
empty. Every terminal observation passes its masking, as in the
agent-server, which is what hands a cut output the conversation's
observations directory.

The tools are built as TerminalTool.create, FileEditorTool.create and
TaskTrackerTool.create build them for a conversation, with one choice: the
terminal is the single-session TerminalExecutor over tmux (what
TerminalExecutor gives when its pool is off, and what its reset makes),
not the pool of tmux panes the agent-server uses by default, because the
pool interrupts a command left running at the next call, which the
tool's own polling flow (an empty command, is_input) cannot survive. The
bridge keeps the single session's control flow (docs/openhands-compat.md).

Input, a JSON object on stdin:
  {"soft_timeout": 1,              # NO_CHANGE_TIMEOUT_SECONDS of the terminal
   "observations_dir": "/tmp/x",   # the conversation's observations directory
   "jobs": 2,                      # runs done at once
   "runs": [{"name": "...", "workspace": "/abs/dir",
             "calls": [{"setup": {...}, "tool": "terminal", "arguments": {...}}]}]}
Each run gets its own tools over its own workspace; its calls run in
order. "$WORKSPACE" in a call's arguments stands for the workspace. A
setup is fixtures' ohtest.Setup: "files" (path -> text, written into the
workspace), "sh" (run by bash in the workspace), "sleep_ms".

With "definitions_workspace": "/abs/dir", the first line is
  {"name": "definitions", "definitions": [{"name", "inputSchema", "annotations"}]}
the tools as ToolDefinition.to_mcp_tool renders them.

Output, one JSON line per run on stdout, as each finishes:
  {"name": "...", "results": [{"is_error": bool,
                               "content": ["text", {"image": "image/png", "bytes": 68}]}]}
An error's "[An error occurred during execution.]" header block is left
out (is_error says it; an MCP client adds it from isError). Anything else
the SDK prints goes to stderr.
"""

import base64
import concurrent.futures
import json
import os
import subprocess
import sys
import threading
import time
import traceback
import types
import uuid

# The SDK and libtmux log and print, some of it on import: stdout carries
# the results only.
RESULTS = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr

import openhands.tools.terminal.impl as terminal_impl  # noqa: E402
from openhands.sdk.agent.agent import Agent  # noqa: E402
from openhands.sdk.agent.parallel_executor import ParallelToolExecutor  # noqa: E402
from openhands.sdk.conversation.secret_registry import SecretRegistry  # noqa: E402
from openhands.sdk.llm import MessageToolCall  # noqa: E402
from openhands.sdk.tool import Observation, ToolExecutor  # noqa: E402
from openhands.tools.file_editor import FileEditorTool  # noqa: E402
from openhands.tools.task_tracker import TaskTrackerTool  # noqa: E402
from openhands.tools.terminal import TerminalTool  # noqa: E402
from openhands.tools.terminal.impl import TerminalExecutor  # noqa: E402

# The single session, not the pool: see the module's doc. The pool is
# chosen in impl on this check alone; the session it makes instead is
# tmux, which the factory finds on its own.
terminal_impl._is_tmux_available = lambda: False


def main() -> int:
    out = RESULTS
    req = json.load(sys.stdin)
    runner = Runner(req)
    lock = threading.Lock()
    failed = False

    def one(run):
        nonlocal failed
        try:
            line = {"name": run["name"], "results": runner.run(run)}
        except Exception:
            failed = True
            line = {"name": run["name"], "error": traceback.format_exc()}
        with lock:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            out.flush()

    if req.get("definitions_workspace"):
        tools = Tools(runner, req["definitions_workspace"])
        out.write(json.dumps({"name": "definitions", "definitions": definitions(tools)}, ensure_ascii=False) + "\n")
        tools.close()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, req.get("jobs", 1))) as pool:
        list(pool.map(one, req["runs"]))
    return 1 if failed else 0


def definitions(tools):
    """Each tool as ToolDefinition.to_mcp_tool renders it, without its
    description (the bridge words its own) and output schema (the bridge
    declares none): name, inputSchema and annotations, None left out."""
    out = []
    for t in tools.tools_map().values():
        m = t.to_mcp_tool()
        out.append({
            "name": m["name"],
            "inputSchema": m["inputSchema"],
            "annotations": m["annotations"].model_dump(exclude_none=True),
        })
    return out


class Runner:
    def __init__(self, req):
        self.soft_timeout = req.get("soft_timeout")
        self.observations_dir = req.get("observations_dir")

    def conv_state(self, workspace):
        """What the tools' create() read of a ConversationState."""
        return types.SimpleNamespace(
            workspace=types.SimpleNamespace(working_dir=workspace),
            env_observation_persistence_dir=self.observations_dir,
            persistence_dir=None,  # task_tracker keeps its list in memory
            agent=types.SimpleNamespace(llm=types.SimpleNamespace(vision_is_active=lambda: True)),
        )

    def run(self, run):
        workspace = run["workspace"]
        tools = Tools(self, workspace)
        try:
            results = []
            for call in run["calls"]:
                apply_setup(call.get("setup"), workspace)
                args = json.loads(json.dumps(call.get("arguments", {})).replace("$WORKSPACE", workspace))
                results.append(tools.call(call["tool"], args))
            return results
        finally:
            tools.close()


class Tools:
    """One conversation's tools, and the agent's path to them."""

    def __init__(self, runner, workspace):
        self.runner = runner
        self.workspace = workspace
        self._map = None
        # What the tools read of the conversation: its secrets, none here.
        # A terminal observation goes through their masking, which is what
        # gives it the observations directory that a cut output is saved
        # to.
        self.conversation = types.SimpleNamespace(state=types.SimpleNamespace(secret_registry=SecretRegistry()))

    def tools_map(self):
        # Made at the first call: a run of file_editor calls starts no tmux.
        if self._map is None:
            r = self.runner
            state = r.conv_state(self.workspace)
            tools = []
            tools += TerminalTool.create(state, executor=LazyTerminal(r, self.workspace))
            tools += FileEditorTool.create(state)
            tools += TaskTrackerTool.create(state)
            self._map = {t.name: t for t in tools}
        return self._map

    def call(self, name, arguments):
        agent = AgentStandIn(Agent, self.tools_map())
        tool_call = MessageToolCall(
            id="call_" + uuid.uuid4().hex[:8],
            name=name,
            arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
            origin="completion",
        )
        events = []
        action_event = Agent._get_action_event(
            agent, tool_call, conversation=self.conversation, llm_response_id="response", on_event=events.append
        )
        if action_event is None:
            # Refused before it ran: the AgentErrorEvent after the ActionEvent.
            return llm_text(events[-1], is_error=True)
        # _run_safe is how the agent's ParallelToolExecutor runs each call:
        # the tool's declared resources locked, any exception an
        # AgentErrorEvent "Error executing tool ...".
        [result] = ParallelToolExecutor()._run_safe(
            action_event,
            lambda ae: Agent._execute_action_event(agent, self.conversation, ae),
            tool=self.tools_map()[action_event.tool_name],
        )
        return llm_text(result, is_error=getattr(getattr(result, "observation", None), "is_error", True))

    def close(self):
        if self._map is not None:
            for t in self._map.values():
                if t.executor is not None:
                    t.executor.close()


class LazyTerminal(ToolExecutor):
    """The TerminalExecutor TerminalTool.create makes, made at the first
    terminal call: a run of file_editor calls starts no tmux."""

    is_pooled = False

    def __init__(self, runner, workspace):
        self._runner = runner
        self._workspace = workspace
        self._executor = None

    def _get(self):
        if self._executor is None:
            self._executor = TerminalExecutor(
                working_dir=self._workspace,
                no_change_timeout_seconds=self._runner.soft_timeout,
                full_output_save_dir=self._runner.observations_dir,
            )
        return self._executor

    def __call__(self, action, conversation=None):
        return self._get()(action, conversation)

    def interrupt(self):
        if self._executor is not None:
            self._executor.interrupt()

    def close(self):
        if self._executor is not None:
            self._executor.close()


class AgentStandIn:
    """The part of an Agent that _get_action_event and _execute_action_event
    touch: its tools, and the Agent's own methods they call."""

    critic = None  # no critic configured, as on a conversation without one

    def __init__(self, agent_class, tools_map):
        self.tools_map = tools_map
        self._agent_class = agent_class

    def __getattr__(self, name):
        fn = getattr(self._agent_class, name)
        return types.MethodType(fn, self)


def llm_text(event, is_error):
    """The event as the LLM reads it: its message's content blocks, the
    error header left out."""
    blocks = []
    for c in event.to_llm_message().content:
        if hasattr(c, "image_urls"):
            for url in c.image_urls:
                head, _, data = url.partition(",")
                mime = head.removeprefix("data:").removesuffix(";base64")
                blocks.append({"image": mime, "bytes": len(base64.b64decode(data))})
        else:
            blocks.append(c.text)
    if is_error and blocks and blocks[0] == Observation.ERROR_MESSAGE_HEADER:
        blocks = blocks[1:]
    return {"is_error": bool(is_error), "content": blocks}


def apply_setup(setup, workspace):
    """ohtest.Setup.Apply: files, then sh, then sleep_ms."""
    if not setup:
        return
    for name, text in (setup.get("files") or {}).items():
        path = os.path.join(workspace, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    if setup.get("sh"):
        subprocess.run(["bash", "-c", setup["sh"]], cwd=workspace, check=True)
    if setup.get("sleep_ms"):
        time.sleep(setup["sleep_ms"] / 1000)


if __name__ == "__main__":
    code = main()
    RESULTS.flush()
    # Every run closed its tools; the interpreter's own teardown of the
    # SDK's modules takes seconds and has nothing left to do.
    os._exit(code)
