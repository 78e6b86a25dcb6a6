"""Profiling from the editor: `perf-lint.profile` with progress, cancellation, the verdict
on the diagnostic and the report opened; and its off switch. These really run torch in
the profiler's child process (CPU is enough)."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import os
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from tests.lsp_client import (
    CODE, MARKUP, NEOVIM, VSCODE, Notebook, apply_workspace_edit, codes, diagnostics, open_py, pushed, replace_all, session,
    timed,
)
from tests.test_lsp_actions import actions_at, resolved

HAS_PROFILER = importlib.util.find_spec("perf_lint.profiler") is not None and hasattr(
    importlib.import_module("perf_lint.profiler"), "run_profile")
HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_profiler = pytest.mark.skipif(not (HAS_PROFILER and HAS_TORCH),
                                    reason="perf_lint.profiler.run_profile or torch is not installed yet")

TRAIN = '''import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, index):
        return torch.full((8,), float(index % 7)) + 0.1 * torch.randn(8), index % 2  # made per item: TPL101


model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(Squares(), batch_size=16)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''
FAST = {"profiling": {"steps": [0, 1, 2], "timeoutS": 120}}


async def profile_action(client, uri: str) -> types.CodeAction:
    result = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(types.Position(14, 0), types.Position(14, 10)),
        context=types.CodeActionContext(diagnostics=[]))), 30)
    return next(a for a in result if a.title == "Profile this cell (TPL101)")


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


@needs_profiler
@timed(300)
async def test_profile_command_reports_progress_verdict_and_report(tmp_path):
    async with session(VSCODE, tmp_path, settings=FAST) as client:
        uri = open_py(client, tmp_path / "train.py", TRAIN)
        assert codes(await pushed(client, uri, 1)) == ["TPL101"]
        action = await profile_action(client, uri)
        assert action.command.command == "perf-lint.profile"
        result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=action.command.command, arguments=action.command.arguments)), 280)
        assert result["failure"] is None, result["error"]
        (verdict,) = result["verdicts"]
        assert verdict["code"] == "TPL101" and verdict["verdict"] in ("confirmed", "not confirmed", "inconclusive")
        (reports,) = client.progress_reports.values()
        assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
        assert any(isinstance(r, types.WorkDoneProgressReport) for r in reports)
        assert isinstance(reports[-1], types.WorkDoneProgressEnd)
        (diag,) = await pushed(client, uri, None, lambda d: d and " Profiled on " in d[0].message)
        assert diag.message.endswith(f". {verdict['sentence']}") and verdict["sentence"].startswith("Profiled on CPU: ")
        (shown,) = client.shown_documents
        assert shown.uri.endswith("report.md") and Path(result["report_path"]).is_file()


SLOW_ITEMS = TRAIN.replace("import torch\n", "import time\nimport torch\n", 1).replace(
    "    def __getitem__(self, index):\n", "    def __getitem__(self, index):\n        time.sleep(0.004)  # read from disk\n")


@needs_profiler
@timed(420)
async def test_sweep_winner_is_a_quick_fix_with_its_measured_speed_up(tmp_path):
    async with session(VSCODE, tmp_path, settings=FAST) as client:
        uri = open_py(client, tmp_path / "train.py", SLOW_ITEMS)
        assert codes(await pushed(client, uri, 1)) == ["TPL101"]
        line = SLOW_ITEMS.splitlines().index("loader = DataLoader(Squares(), batch_size=16)")
        sweep = next(a for a in await actions_at(client, uri, line)
                     if a.title == "Profile this cell, sweeping the fix's settings (TPL101)")
        assert list(sweep.command.arguments) == [uri, {"line": line}, "TPL101", {"sweep": True}]
        result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=sweep.command.command, arguments=sweep.command.arguments)), 400)
        assert result["failure"] is None, result["error"]
        winner = result["sweep"]["winner"]
        assert winner is not None and winner["verdict"] == "confirmed", result["sweep"]
        measured = [a for a in await actions_at(client, uri, line) if "measured" in a.title]
        title = f"Set num_workers={winner['value']}, persistent_workers=True: measured {winner['ratio']:.2f}x faster (TPL101)"
        assert [a.title for a in measured] == [title] and measured[0].is_preferred
        new = apply_workspace_edit(client, (await resolved(client, measured[0])).edit)[uri]
        assert f"DataLoader(Squares(), batch_size=16, num_workers={winner['value']}, persistent_workers=True)" in new
        replace_all(client, uri, new.replace("batch_size=16", "batch_size=32"))  # another loader: no measured fix
        await pushed(client, uri, client.versions[uri])
        assert not any("measured" in a.title for a in await actions_at(client, uri, line))


@needs_profiler
@timed(300)
async def test_profile_lens_on_a_notebook_cell(tmp_path):
    head, tail = TRAIN.split("model = ")
    async with session(VSCODE, tmp_path, settings=FAST) as client:
        nb = Notebook(client, tmp_path / "train.ipynb", [(MARKUP, "# Training"), (CODE, head), (CODE, "model = " + tail),
                                                         (CODE, 'device = "cuda" if torch.cuda.is_available() else "cpu"\nmodel.to(device)\n')])
        assert codes(await pushed(client, nb.uri_of(2), 1)) == ["TPL101"]
        (lens,) = await asyncio.wait_for(client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=nb.uri_of(2)))), 30)
        assert lens.command.title == "Profile this cell" and list(lens.command.arguments)[1:] == [{"cell": 2}, None]
        result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=lens.command.command, arguments=lens.command.arguments)), 280)
        assert result["failure"] is None, result["error"]
        assert result["target"] == "cell 3" and [v["code"] for v in result["verdicts"]] == ["TPL101"]
        (diag,) = await pushed(client, nb.uri_of(2), None, lambda d: d and " Profiled on " in d[0].message)
        assert await pushed(client, nb.uri_of(1), 1) == []


@needs_profiler
@pytest.mark.parametrize("how", ["progress", "request"])
@timed(180)
async def test_cancelling_a_profile_stops_its_child(tmp_path, how):
    async with session(VSCODE, tmp_path, settings=FAST) as client:
        uri = open_py(client, tmp_path / "train.py", TRAIN)
        await pushed(client, uri, 1)
        action = await profile_action(client, uri)
        params = types.ExecuteCommandParams(command=action.command.command, arguments=action.command.arguments)
        running = asyncio.ensure_future(client.protocol.send_request_async("workspace/executeCommand", params, msg_id="p1"))
        while not any(isinstance(r, types.WorkDoneProgressReport) and r.message.startswith("run 1/")
                      for reports in client.progress_reports.values() for r in reports):
            await asyncio.sleep(0.05)
        server_pid = client._server.pid
        while not children(server_pid):  # the profiler's child is running the code
            await asyncio.sleep(0.05)
        if how == "progress":
            (token,) = client.progress_reports
            client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        else:
            client.protocol.notify("$/cancelRequest", types.CancelParams(id="p1"))
        with pytest.raises(Exception, match="cancel"):
            await asyncio.wait_for(running, 60)
        while children(server_pid):
            await asyncio.sleep(0.1)
        (reports,) = client.progress_reports.values()
        while not isinstance(reports[-1], types.WorkDoneProgressEnd):  # the command's handler is done
            await asyncio.sleep(0.05)
        assert reports[-1].message == "cancelled"
        await pushed(client, uri, 1)
        assert not any(" Profiled on " in d.message for d in client.diagnostics[uri])


@pytest.mark.parametrize("kind", [VSCODE, NEOVIM])
@timed(60)
async def test_profiling_disabled_removes_action_lens_and_command(tmp_path, kind):
    async with session(kind, tmp_path, settings={"profiling": {"enabled": False}}) as client:
        assert "perf-lint.profile" in client.init_result.capabilities.execute_command_provider.commands
        uri = open_py(client, tmp_path / "train.py", "# %%\n" + TRAIN)
        assert codes(await diagnostics(client, kind, uri, 1)) == ["TPL101"]
        actions = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(15, 0), types.Position(15, 10)),
            context=types.CodeActionContext(diagnostics=[]))), 30)
        assert actions and not any("Profile" in a.title for a in actions)
        lenses = await asyncio.wait_for(client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))), 30)
        assert list(lenses) == []
        with pytest.raises(Exception, match="profiling is disabled"):
            await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
                command="perf-lint.profile", arguments=[uri, {"line": 15}, "TPL101"])), 30)


@pytest.mark.skipif(HAS_PROFILER, reason="the profiler is installed: this checks the message when it is not")
@timed(60)
async def test_profile_without_the_profiler_is_a_clear_error(tmp_path):
    async with session(VSCODE, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", TRAIN)
        with pytest.raises(Exception, match="profiler is not available"):
            await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
                command="perf-lint.profile", arguments=[uri, {"line": 14}, "TPL101"])), 30)


@timed(60)
async def test_profile_arguments_are_checked(tmp_path):
    async with session(VSCODE, tmp_path) as client:
        with pytest.raises(Exception, match="expects"):
            await asyncio.wait_for(client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="perf-lint.profile", arguments=[])), 30)
        with pytest.raises(Exception, match="'line' must be a non-negative integer"):
            await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
                command="perf-lint.profile", arguments=["file:///x.py", {"line": -1}, None])), 30)
        uri = open_py(client, tmp_path / "train.py", TRAIN)
        for where in ("x", [3], {"cell": 1, "line": 2}, {}):  # never "profile the whole file"
            with pytest.raises(JsonRpcInvalidParams, match="the location must be"):
                await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
                    command="perf-lint.profile", arguments=[uri, where, None])), 30)


@timed(60)
async def test_profile_runs_only_workspace_files(tmp_path, tmp_path_factory):
    """A file outside the workspace folders (or reached through a symlink out of them) that
    is not open in the editor is refused, and nothing runs."""
    workspace, elsewhere = tmp_path / "ws", tmp_path_factory.mktemp("elsewhere")
    workspace.mkdir()
    marker = elsewhere / "ran"
    outside = elsewhere / "evil.py"
    outside.write_text(f"open({str(marker)!r}, 'w').close()\n" + TRAIN)
    (workspace / "link.py").symlink_to(outside)
    async with session(VSCODE, workspace) as client:
        for path in (outside, workspace / "link.py", workspace / "missing.py"):
            with pytest.raises(JsonRpcException, match="refusing to profile") as refused:
                await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
                    command="perf-lint.profile", arguments=[path.as_uri(), None, None])), 30)
            assert refused.value.code == -32803
    assert not marker.exists()
