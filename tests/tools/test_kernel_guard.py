"""The kernel guard (tools/kernel_guard.py): a kernel killed for its memory comes back, after the
restart Jupyter does, with a message at the learner's next cell; the notebook file is untouched;
interrupt, restart and shutdown work through the guard as without it."""

import json
import os
import signal
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from tools.kernel_guard import (
    MEMORY_VARIABLE,
    clear_stale_markers,
    install,
    kernelspec,
    marker_path,
    memory_limit_mb,
    notice,
)

LIMIT_MB = 400
# Writes every byte (b"x" * n), so the pages are resident at once; a bytearray would not be.
ALLOCATE = "big = b'x' * ({mb} * 2**20)\nimport time\ntime.sleep(30)"


@pytest.fixture
def guarded(tmp_path):
    """Start a guarded kernel (limit LIMIT_MB) from a folder holding a saved notebook; yield
    (manager, client, notebook path); shut everything down after."""
    install(tmp_path / "jupyter", "guarded", None)
    specs = KernelSpecManager(kernel_dirs=[str(tmp_path / "jupyter" / "kernels")])
    folder = tmp_path / "course"
    folder.mkdir()
    notebook = folder / "01_order_blindness.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), notebook)
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    manager = KernelManager(kernel_name="guarded", kernel_spec_manager=specs)
    manager.connection_file = str(runtime / "kernel-test.json")
    env = {**os.environ, MEMORY_VARIABLE: str(LIMIT_MB), "JPY_SESSION_NAME": str(notebook)}
    manager.start_kernel(cwd=str(folder), env=env)
    state = {"client": _client(manager)}
    yield manager, state, notebook
    state["client"].stop_channels()
    if manager.has_kernel:
        manager.shutdown_kernel(now=True)


def _client(manager):
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=30)
    return client


def _run(client, code: str, timeout: float = 30) -> tuple[dict, list[dict]]:
    """Execute code; return (reply content, the cell's outputs as iopub messages' content)."""
    outputs = []

    def hook(message):
        if message["msg_type"] in ("display_data", "stream", "error", "execute_result"):
            outputs.append(message["content"])

    reply = client.execute_interactive(code, output_hook=hook, timeout=timeout)
    return reply["content"], outputs


def _pid(client) -> int:
    reply, outputs = _run(client, "import os; print(os.getpid())")
    assert reply["status"] == "ok" and outputs, (reply, outputs)
    return int(outputs[0]["text"])


def _wait_dead(manager, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while manager.is_alive():
        assert time.monotonic() < deadline, "the kernel should have died"
        time.sleep(0.1)


def _notices(outputs) -> list[str]:
    return [
        o["data"]["text/markdown"]
        for o in outputs
        if "text/markdown" in o.get("data", {})
        and "Your kernel stopped" in o["data"]["text/markdown"]
    ]


def test_killed_past_the_limit_then_restarted_shows_the_message_once(guarded):
    manager, state, notebook = guarded
    saved = notebook.read_bytes()
    before = sorted(p.name for p in notebook.parent.iterdir())
    connection = manager.connection_file
    marker = marker_path(connection)
    _run(state["client"], "x = 41")
    state["client"].execute(ALLOCATE.format(mb=3 * LIMIT_MB))
    _wait_dead(manager)
    record = json.loads(marker.read_text())
    assert record["by_guard"] and record["signal"] == "SIGKILL"
    assert record["limit_mb"] == LIMIT_MB and record["peak_mb"] > LIMIT_MB

    # What Jupyter's restarter does for a kernel that died in its first seconds: new ports, but
    # the same connection file, so the new kernel finds the marker beside it.
    state["client"].stop_channels()
    manager.restart_kernel(now=True, newports=True)
    assert manager.connection_file == connection
    state["client"] = _client(manager)
    reply, outputs = _run(state["client"], "x = 2")
    assert reply["status"] == "ok"
    [message] = _notices(outputs)
    assert "more memory than a kernel may use" in message and f"{LIMIT_MB} MB" in message
    assert "notebook is safe" in message and "from the top" in message
    assert not marker.exists()
    reply, outputs = _run(state["client"], "print(x)")
    assert _notices(outputs) == [] and outputs[0]["text"] == "2\n", "once, and the kernel is fresh"

    # Killed by someone else (the OOM killer, a cgroup): "most likely out of memory".
    os.kill(_pid(state["client"]), signal.SIGKILL)
    _wait_dead(manager)
    state["client"].stop_channels()
    manager.restart_kernel(now=True)
    state["client"] = _client(manager)
    _, outputs = _run(state["client"], "x = 3")
    [message] = _notices(outputs)
    assert "most likely because it ran out of memory" in message

    assert notebook.read_bytes() == saved
    assert sorted(p.name for p in notebook.parent.iterdir()) == before


def test_interrupt_restart_and_shutdown_work_through_the_guard(guarded):
    manager, state, _ = guarded
    client = state["client"]
    kernel = _pid(client)
    guard = manager.provisioner.pid
    assert psutil.Process(kernel).ppid() == guard
    # stop_on_error=False: otherwise ipykernel aborts the requests that reach it just after the
    # interrupted cell (status "aborted", no output), which on a busy machine can be the next one.
    client.execute("import time; time.sleep(30)", stop_on_error=False)
    time.sleep(1)
    manager.interrupt_kernel()
    reply = client.get_shell_msg(timeout=10)["content"]  # not the 30 s sleep's end
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    assert _pid(client) == kernel, "interrupted, not restarted"

    # A restart the learner asks for is not a death: no message after it.
    client.stop_channels()
    manager.restart_kernel(now=False)
    state["client"] = client = _client(manager)
    _, outputs = _run(client, "x = 1")
    assert _notices(outputs) == []
    kernel, guard = _pid(client), manager.provisioner.pid

    manager.shutdown_kernel(now=False)
    gone = psutil.wait_procs(
        [psutil.Process(p) for p in (kernel, guard) if psutil.pid_exists(p)], 5
    )
    assert gone[1] == [], "no process left behind"
    assert not marker_path(manager.connection_file).exists()


@pytest.mark.parametrize(
    ("record", "says"),
    [
        ({"signal": "SIGKILL", "by_guard": True, "peak_mb": 3100, "limit_mb": 3072}, "3.0 GB"),
        ({"signal": "SIGKILL", "peak_mb": 2048, "limit_mb": 4096, "limit_of": "server"}, "4.0 GB"),
        ({"signal": "SIGKILL"}, "most likely because it ran out of memory."),
        ({"signal": "SIGSEGV"}, "it crashed (SIGSEGV)"),
        ({}, "it crashed (a signal)"),
    ],
)
def test_the_message_says_why_and_what_to_do(record, says):
    markdown, plain = notice(record)
    assert says in markdown
    assert "Only the kernel's memory was lost" in plain and "**" not in plain
    assert "LENGTH" in markdown


def test_chapter_8_gets_its_own_advice():
    markdown, _ = notice({"signal": "SIGKILL", "notebook": "notebooks/08_real_model.ipynb"})
    assert "In this chapter, keep `LENGTH`" in markdown


@pytest.mark.parametrize(
    ("value", "limit"), [("3000", 3000), ("", None), ("lots", None), ("0", None)]
)
def test_memory_limit_from_the_environment(monkeypatch, value, limit):
    monkeypatch.setenv(MEMORY_VARIABLE, value)
    assert memory_limit_mb() == limit


def test_old_markers_of_kernels_long_gone_are_cleared(tmp_path):
    (tmp_path / "kernel-live.json").write_text("{}")
    for name in ("kernel-live.json", "kernel-gone.json", "kernel-new.json"):
        marker_path(tmp_path / name).write_text("{}")
    day_old = time.time() - 2 * 86400
    for name in ("kernel-live.json", "kernel-gone.json"):
        os.utime(marker_path(tmp_path / name), (day_old, day_old))
    clear_stale_markers(tmp_path)
    left = sorted(p.name for p in tmp_path.glob(".*"))
    assert left == [".kernel-live.json.stopped", ".kernel-new.json.stopped"]


def test_the_kernelspec_runs_this_file_by_its_path():
    spec = kernelspec(memory_mb=2500)
    assert spec["argv"][1] == str(Path(__file__).resolve().parents[2] / "tools" / "kernel_guard.py")
    assert spec["argv"][2:] == ["-f", "{connection_file}"]
    assert spec["env"] == {MEMORY_VARIABLE: "2500"} and spec["language"] == "python"
    assert marker_path("/run/kernel-1.json") == Path("/run/.kernel-1.json.stopped")
