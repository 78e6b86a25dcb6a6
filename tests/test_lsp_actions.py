"""Code actions, resolve, fix-all, suppression and hover, applied the way a client does."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from tests.lsp_client import (
    FIXED, NEOVIM, SAMPLE, VSCODE, apply_workspace_edit, assert_parses, codes, diagnostics, encoding, open_py,
    replace_all, session, timed, units,
)

BOTH = pytest.mark.parametrize("kind", [VSCODE, NEOVIM])


async def actions_at(client, uri: str, line: int, only=None) -> list:
    text_line = client.texts[uri].splitlines()[line]
    end = units(text_line, encoding(client))
    result = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(types.Position(line, 0), types.Position(line, end)),
        context=types.CodeActionContext(diagnostics=[], only=only))), 30)
    return list(result or [])


async def resolved(client, action: types.CodeAction) -> types.CodeAction:
    if action.edit is None:  # clients that resolve edits lazily (Neovim) ask for it now
        action = await asyncio.wait_for(client.code_action_resolve_async(action), 30)
    assert action.edit is not None, action.title
    return action


async def apply(client, kind: str, uri: str, action: types.CodeAction) -> str:
    """Apply an action's edit to the client's text, tell the server, return the new text."""
    action = await resolved(client, action)
    new = apply_workspace_edit(client, action.edit)
    for changed_uri, text in new.items():
        replace_all(client, changed_uri, text)
    return client.texts[uri]


@BOTH
@timed(60)
async def test_quick_fix_is_resolved_applied_and_parses(tmp_path, kind):
    async with session(kind, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert codes(await diagnostics(client, kind, uri, 1)) == ["TPL101"]
        listed = await actions_at(client, uri, 1)
        fix = next(a for a in listed if a.kind == types.CodeActionKind.QuickFix and "num_workers" in a.title)
        assert fix.is_preferred and fix.diagnostics[0].code == "TPL101"
        if kind == NEOVIM:
            assert fix.edit is None and fix.data  # computed only when chosen
        text = await apply(client, kind, uri, fix)
        assert text == FIXED
        assert_parses(text)
        assert await diagnostics(client, kind, uri, client.versions[uri]) == []


@BOTH
@timed(60)
async def test_suppression_appends_or_merges_noqa(tmp_path, kind):
    text = (
        "from torch.utils.data import DataLoader\n"
        "a = DataLoader(ds, batch_size=64)\n"
        "b = DataLoader(ds)  # noqa: E501\n"
        "\n"
        "c = DataLoader(ds,  # keep this comment\n"
        "               batch_size=8)\n"
    )
    async with session(kind, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", text)
        assert codes(await diagnostics(client, kind, uri, 1)) == ["TPL101"] * 3
        for count, line in enumerate((1, 2, 4)):
            listed = await actions_at(client, uri, line)
            suppress = [a for a in listed if a.title == "Suppress TPL101 for this line"]
            assert len(suppress) == 1, (line, [a.title for a in listed])
            text = await apply(client, kind, uri, suppress[0])
            assert_parses(text)
            assert codes(await diagnostics(client, kind, uri, client.versions[uri])) == ["TPL101"] * (2 - count)
        lines = text.splitlines()
        assert lines[1] == "a = DataLoader(ds, batch_size=64)  # noqa: TPL101"
        assert lines[2] == "b = DataLoader(ds)  # noqa: E501, TPL101"
        assert lines[4] == "c = DataLoader(ds,  # keep this comment  # noqa: TPL101"
        assert await diagnostics(client, kind, uri, client.versions[uri]) == []


@timed(60)
async def test_suppression_avoids_a_line_continuation(tmp_path):
    text = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, \\\n    batch_size=64)\n"
    async with session(NEOVIM, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", text)
        assert codes(await diagnostics(client, NEOVIM, uri)) == ["TPL101"]
        (suppress,) = [a for a in await actions_at(client, uri, 1) if a.title.startswith("Suppress")]
        text = await apply(client, NEOVIM, uri, suppress)
        assert_parses(text)
        assert text.splitlines()[1:] == ["loader = DataLoader(ds, \\", "    batch_size=64)  # noqa: TPL101"]
        assert await diagnostics(client, NEOVIM, uri) == []


@BOTH
@timed(60)
async def test_fix_all_source_action(tmp_path, kind):
    text = SAMPLE + "\nval = DataLoader(ds, batch_size=32, shuffle=False)\n"
    async with session(kind, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", text)
        assert codes(await diagnostics(client, kind, uri, 1)) == ["TPL101", "TPL101"]
        (fix_all,) = await actions_at(client, uri, 0, only=[types.CodeActionKind.SourceFixAll])
        assert fix_all.kind == "source.fixAll.perf-lint"
        text = await apply(client, kind, uri, fix_all)
        assert_parses(text)
        assert text.count("num_workers=4") == 2
        assert await diagnostics(client, kind, uri, client.versions[uri]) == []


@timed(60)
async def test_only_filters_kinds(tmp_path):
    async with session(VSCODE, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        await diagnostics(client, VSCODE, uri, 1)
        quick = await actions_at(client, uri, 1, only=[types.CodeActionKind.QuickFix])
        assert quick and all(a.kind == types.CodeActionKind.QuickFix for a in quick)
        assert await actions_at(client, uri, 1, only=[types.CodeActionKind.Refactor]) == []
        assert [a for a in await actions_at(client, uri, 0) if a.kind == types.CodeActionKind.QuickFix] == []


@timed(60)
async def test_fix_all_command_applies_a_workspace_edit(tmp_path):
    async with session(VSCODE, tmp_path) as client:
        assert "perf-lint.fixAll" in client.init_result.capabilities.execute_command_provider.commands
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        await diagnostics(client, VSCODE, uri, 1)
        result = await asyncio.wait_for(client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="perf-lint.fixAll", arguments=[uri])), 30)
        assert result["applied"] is True
        (edit,) = client.applied_edits
        assert apply_workspace_edit(client, edit)[uri] == FIXED


@timed(60)
async def test_kept_diagnostics_offer_suppression_but_no_quick_fix(tmp_path):
    async with session(NEOVIM, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        await diagnostics(client, NEOVIM, uri)
        replace_all(client, uri, "import (\n" + SAMPLE)  # unparseable: the finding is kept, moved
        assert codes(await diagnostics(client, NEOVIM, uri)) == ["TPL101"]
        listed = await actions_at(client, uri, 2)
        titles = [a.title for a in listed]
        assert not any("num_workers" in t for t in titles)  # no fix computed for older text
        (suppress,) = [a for a in listed if a.title == "Suppress TPL101 for this line"]
        text = await apply(client, NEOVIM, uri, suppress)  # still possible: the comment goes in as is
        assert text.splitlines()[2] == "loader = DataLoader(ds, batch_size=64)  # noqa: TPL101"
        assert await diagnostics(client, NEOVIM, uri) == []


@BOTH
@timed(60)
async def test_hover_shows_rule_docs(tmp_path, kind):
    text = SAMPLE + "other = DataLoader(ds)  # noqa: TPL101\n"
    async with session(kind, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", text)
        await diagnostics(client, kind, uri, 1)

        async def hover(line: int, needle: str):
            col = units(text.splitlines()[line][: text.splitlines()[line].index(needle) + 1], encoding(client))
            return await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line, col))), 30)

        on_finding = await hover(1, "batch_size")
        assert on_finding.contents.kind == types.MarkupKind.Markdown
        assert on_finding.contents.value.startswith("**TPL101** dataloader-sync-loading")
        assert on_finding.range.start.line == 1
        on_noqa = await hover(2, "TPL101")
        assert on_noqa.contents.value.startswith("**TPL101** dataloader-sync-loading")
        assert await hover(0, "import") is None
