"""Configuration: pyproject.toml (found upwards, reloaded on change), editor settings over
workspace/configuration, how they combine (configurationPreference), and bad configuration."""

from __future__ import annotations

import asyncio
import os

import pytest
from lsprotocol import types

from tests.lsp_client import (
    NEOVIM, SAMPLE, VSCODE, codes, diagnostics, open_py, pull, pushed, replace_all, server_info, session, timed,
)

BOTH = pytest.mark.parametrize("kind", [VSCODE, NEOVIM])


def write(path, text: str) -> None:
    """Write and move the mtime on, so a change is seen even within the clock's resolution."""
    stamp = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(stamp + 2_000_000_000, stamp + 2_000_000_000))


def watched(client, path) -> None:
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)]))


@BOTH
@timed(90)
async def test_pyproject_found_upwards_and_reloaded(tmp_path, kind):
    pyproject = tmp_path / "pyproject.toml"
    write(pyproject, '[tool.perf-lint]\nignore = ["TPL101"]\n')
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    async with session(kind, tmp_path) as client:
        if kind == VSCODE:  # it asks to be told about pyproject.toml changes
            while not any(r.method == "workspace/didChangeWatchedFiles" for r in client.registrations):
                await asyncio.sleep(0.02)
        uri = open_py(client, tmp_path / "src" / "pkg" / "train.py", SAMPLE)
        assert await diagnostics(client, kind, uri, 1) == []
        write(pyproject, '[tool.perf-lint]\nselect = ["TPL1"]\n')
        watched(client, pyproject)
        if kind == VSCODE:
            assert codes(await pushed(client, uri, None, lambda d: len(d) == 1)) == ["TPL101"]
        else:
            assert codes(await pull(client, uri)) == ["TPL101"]


@timed(60)
async def test_pyproject_change_seen_without_a_notification(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    write(pyproject, '[tool.perf-lint]\nselect = ["TPL1"]\n')
    async with session(NEOVIM, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert codes(await pull(client, uri)) == ["TPL101"]
        write(pyproject, '[tool.perf-lint]\nignore = ["TPL1"]\n')  # no didChangeWatchedFiles
        replace_all(client, uri, SAMPLE + "\n")
        assert await pull(client, uri) == []


@timed(60)
async def test_editor_settings_and_did_change_configuration(tmp_path):
    async with session(VSCODE, tmp_path, settings={"ignore": ["TPL101"]}) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert await pushed(client, uri, 1) == []
        client.set_configuration({"perfLint": {"select": ["TPL1"]}})
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        assert codes(await pushed(client, uri, None, lambda d: len(d) == 1)) == ["TPL101"]


@timed(60)
async def test_settings_pushed_by_clients_without_workspace_configuration(tmp_path):
    def no_configuration_requests(caps):
        caps.workspace.configuration = False

    async with session(VSCODE, tmp_path, init_options={"ignore": ["TPL101"]}, adjust=no_configuration_requests) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert await pushed(client, uri, 1) == []
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"perfLint": {}}))
        assert codes(await pushed(client, uri, None, lambda d: len(d) == 1)) == ["TPL101"]


@pytest.mark.parametrize("preference, expected", [
    ("editorFirst", []), ("filesystemFirst", ["TPL101"]), ("editorOnly", []),
])
@timed(60)
async def test_configuration_preference(tmp_path, preference, expected):
    write(tmp_path / "pyproject.toml", '[tool.perf-lint]\nselect = ["TPL101"]\n')
    settings = {"ignore": ["TPL101"], "configurationPreference": preference}
    async with session(NEOVIM, tmp_path, settings=settings) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert codes(await pull(client, uri)) == expected


@timed(60)
async def test_editor_lists_add_to_pyproject_and_unset_ones_change_nothing(tmp_path):
    """As `perf-lint check --ignore/--extend-select` do: the editor's lists extend pyproject's."""
    write(tmp_path / "pyproject.toml", '[tool.perf-lint]\nignore = ["TPL101"]\n')
    for settings, expected in (({}, []), ({"ignore": ["TPL401"]}, []), ({"select": ["TPL1"]}, ["TPL101"])):
        async with session(NEOVIM, tmp_path, settings=settings) as client:
            uri = open_py(client, tmp_path / "train.py", SAMPLE)
            assert codes(await pull(client, uri)) == expected, settings


@timed(60)
async def test_bad_pyproject_is_reported_once_and_defaults_apply(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.perf-lint]\nselect = "TPL1"\n')
    async with session(VSCODE, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert codes(await pushed(client, uri, 1)) == ["TPL101"]  # the defaults
        for _ in range(3):
            replace_all(client, uri, client.texts[uri] + "\n")
        await pushed(client, uri, client.versions[uri])
        await server_info(client)
        errors = [m for m in client.log_messages if "pyproject.toml" in m.message]
        popups = [m for m in client.messages if "pyproject.toml" in m.message]
        assert len(errors) == 1 and errors[0].type == types.MessageType.Error
        assert "'select' must be a list" in errors[0].message
        assert len(popups) == 1 and popups[0].type == types.MessageType.Warning


@timed(60)
async def test_bad_pyproject_keeps_the_previous_good_config(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    write(pyproject, '[tool.perf-lint]\nignore = ["TPL101"]\n')
    async with session(NEOVIM, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert await pull(client, uri) == []
        write(pyproject, '[tool.perf-lint]\nignore = ["TPL101"\n')  # invalid TOML mid-edit
        watched(client, pyproject)
        replace_all(client, uri, SAMPLE + "\n")
        assert await pull(client, uri) == []  # still ignoring TPL101
        assert any("invalid TOML" in m.message for m in client.log_messages)


@timed(60)
async def test_bad_editor_settings_are_reported_and_ignored(tmp_path):
    async with session(VSCODE, tmp_path, settings={"select": ["NOPE1"], "debounceMs": "fast"}) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert codes(await pushed(client, uri, 1)) == ["TPL101"]
        await asyncio.wait_for(server_info(client), 30)
        assert any("perfLint" in m.message for m in client.messages)


@timed(60)
async def test_excluded_files_and_rules_off_by_default(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.perf-lint]\nexclude = ["generated/*"]\n')
    (tmp_path / "generated").mkdir()
    profiled = ("import torch\nwith torch.profiler.profile(with_stack=True, profile_memory=True) as p:\n"
                "    for batch in loader:\n        step(batch)\n")
    async with session(NEOVIM, tmp_path, settings={"extendSelect": ["TPL403"]}) as client:  # off by default
        assert await pull(client, open_py(client, tmp_path / "generated" / "train.py", SAMPLE)) == []
        info = [d for d in await pull(client, open_py(client, tmp_path / "prof.py", profiled)) if d.code == "TPL403"]
        assert info and all(d.severity == types.DiagnosticSeverity.Information for d in info)


@timed(60)
async def test_untitled_buffers_use_the_workspace_configuration(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.perf-lint]\nignore = ["TPL101"]\nextend-select = ["TPL403"]\n')
    text = SAMPLE + ("import torch\nwith torch.profiler.profile(with_stack=True, profile_memory=True) as p:\n"
                     "    for batch in loader:\n        step(batch)\n")
    async with session(NEOVIM, tmp_path) as client:
        uri = "untitled:Untitled-1"
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        assert "TPL403" in codes(await pull(client, uri)) and "TPL101" not in codes(await pull(client, uri))


@timed(60)
async def test_pulling_clients_are_asked_to_pull_again_after_a_settings_change(tmp_path):
    def refresh_support(caps):
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)

    async with session(NEOVIM, tmp_path, settings={"ignore": ["TPL101"]}, adjust=refresh_support) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert await pull(client, uri) == []
        client.set_configuration({"perfLint": {}})
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        while client.diagnostic_refresh_count == 0:
            await asyncio.sleep(0.02)
        assert codes(await pull(client, uri)) == ["TPL101"]
        assert client.published == []
