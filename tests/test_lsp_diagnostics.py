"""Diagnostics end to end: push (VS Code) and pull (Neovim), edits, bursts, syntax errors,
positions in UTF-16 / UTF-8, and the server's footprint."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from tests.lsp_client import (
    NEOVIM, SAMPLE, VSCODE, close, codes, diagnostics, edit, encoding, open_py, pull, pushed, replace_all,
    server_info, session, timed, units,
)

BOTH = pytest.mark.parametrize("kind", [VSCODE, NEOVIM])


@BOTH
@timed(60)
async def test_finding_becomes_a_complete_diagnostic(tmp_path, kind):
    async with session(kind, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        (diag,) = await diagnostics(client, kind, uri, 1)
        assert diag.code == "TPL101" and diag.source == "perf-lint"
        assert diag.severity == types.DiagnosticSeverity.Warning
        assert diag.code_description.href == "https://github.com/perf-lint/perf-lint/blob/main/docs/rules/TPL101.md"
        assert "num_workers" in diag.message
        line = SAMPLE.splitlines()[1]
        assert (diag.range.start.line, diag.range.start.character) == (1, line.index("DataLoader"))
        assert (diag.range.end.line, diag.range.end.character) == (1, len(line))


@timed(60)
async def test_pull_clients_get_nothing_pushed(tmp_path):
    async with session(NEOVIM, tmp_path) as client:
        assert client.init_result.capabilities.diagnostic_provider is not None
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert codes(await pull(client, uri)) == ["TPL101"]
        replace_all(client, uri, SAMPLE + "loader2 = DataLoader(ds)\n")
        assert codes(await pull(client, uri)) == ["TPL101", "TPL101"]
        await server_info(client)  # a round trip after the analyses: any push would have arrived
        assert client.published == []


@timed(60)
async def test_pull_reports_unchanged_results_by_id(tmp_path):
    async with session(NEOVIM, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        ident = types.TextDocumentIdentifier(uri=uri)
        first = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=ident))
        again = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=ident, previous_result_id=first.result_id))
        assert first.kind == "full" and first.result_id and again.kind == "unchanged"
        replace_all(client, uri, SAMPLE.replace("64)", "64, num_workers=2)"))
        changed = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=ident, previous_result_id=first.result_id))
        assert changed.kind == "full" and list(changed.items) == []


@BOTH
@timed(60)
async def test_edit_fix_close_reopen(tmp_path, kind):
    async with session(kind, tmp_path) as client:
        path = tmp_path / "train.py"
        uri = open_py(client, path, SAMPLE)
        assert codes(await diagnostics(client, kind, uri, 1)) == ["TPL101"]
        line = SAMPLE.splitlines()[1]
        at = units(line[: line.index(")")], encoding(client))
        version = edit(client, uri, (1, at), (1, at), ", num_workers=4")
        assert await diagnostics(client, kind, uri, version) == []
        version = edit(client, uri, (1, at), (1, at + len(", num_workers=4")), "")
        assert codes(await diagnostics(client, kind, uri, version)) == ["TPL101"]
        close(client, uri)
        if kind == VSCODE:
            assert await pushed(client, uri, None, lambda d: not d) == []
        else:
            assert await pull(client, uri) == []  # closed: the server no longer reports on it
        uri = open_py(client, path, SAMPLE + "other = DataLoader(ds)\n")
        assert codes(await diagnostics(client, kind, uri, 1, lambda d: len(d) == 2)) == ["TPL101", "TPL101"]


@timed(90)
async def test_burst_of_edits_publishes_only_the_last_version(tmp_path):
    async with session(VSCODE, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert codes(await pushed(client, uri, 1)) == ["TPL101"]
        before = len(client.published)
        for i in range(1, 51):  # each version moves the finding one line further down
            edit(client, uri, (1, 0), (1, 0), "\n")
        final = client.versions[uri]
        (diag,) = await pushed(client, uri, final)
        assert diag.range.start.line == 51
        await server_info(client)
        later = client.published[before:]
        assert [p.version for p in later] == [final]


@timed(90)
async def test_burst_of_edits_with_pulls_in_between(tmp_path):
    async with session(NEOVIM, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        pulls = []
        for i in range(1, 51):
            edit(client, uri, (1, 0), (1, 0), "\n")
            pulls.append(asyncio.ensure_future(pull(client, uri)))
        results = await asyncio.gather(*pulls)
        assert [d.range.start.line for d in results[-1]] == [51]
        for i, items in enumerate(results):  # no answer describes a version older than its request's
            assert [d.range.start.line >= 2 + i for d in items] == [True]
        assert [d.range.start.line for d in await pull(client, uri)] == [51]


BROKEN = "import (\n"


@BOTH
@timed(60)
async def test_unparseable_text_keeps_moved_diagnostics(tmp_path, kind):
    async with session(kind, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert codes(await diagnostics(client, kind, uri, 1)) == ["TPL101"]
        version = edit(client, uri, (0, 0), (0, 0), BROKEN)  # now nothing parses
        (kept,) = await diagnostics(client, kind, uri, version)
        assert kept.code == "TPL101" and kept.range.start.line == 2  # moved down with the text
        line = client.texts[uri].splitlines()[2]
        col = units(line[: line.index("ds")], encoding(client))
        version = edit(client, uri, (2, col), (2, col + 2), "data")  # an edit inside the finding drops it
        assert await diagnostics(client, kind, uri, version) == []
        version = edit(client, uri, (0, 0), (1, 0), "")  # parses again: fresh results
        assert codes(await diagnostics(client, kind, uri, version)) == ["TPL101"]


@timed(60)
async def test_syntax_errors_shown_only_when_asked(tmp_path):
    async with session(VSCODE, tmp_path, settings={"showSyntaxErrors": True}) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        assert codes(await pushed(client, uri, 1)) == ["TPL101"]
        version = edit(client, uri, (0, 0), (0, 0), BROKEN)
        diags = await pushed(client, uri, version)
        assert sorted(codes(diags)) == ["TPL000", "TPL101"]
        syntax = next(d for d in diags if d.code == "TPL000")
        assert syntax.severity == types.DiagnosticSeverity.Error and syntax.range.start.line == 0


@timed(60)
async def test_utf16_columns_after_an_emoji(tmp_path):
    text = 'from torch.utils.data import DataLoader\nx = "😀 é"; loader = DataLoader(ds, batch_size=64)\n'
    async with session(VSCODE, tmp_path) as client:
        assert encoding(client) == "utf-16"
        uri = open_py(client, tmp_path / "train.py", text)
        (diag,) = await pushed(client, uri, 1)
        line = text.splitlines()[1]
        start = line.index("DataLoader")
        assert diag.range.start.character == len(line[:start].encode("utf-16-le")) // 2 == start + 1
        assert diag.range.end.character == len(line.encode("utf-16-le")) // 2
        at = units(line[: line.rindex(")")], "utf-16")  # an incremental edit after the emoji
        version = edit(client, uri, (1, at), (1, at), ", num_workers=4")
        assert client.texts[uri].splitlines()[1].endswith("batch_size=64, num_workers=4)")
        assert await pushed(client, uri, version) == []


@timed(60)
async def test_utf8_when_the_client_prefers_it(tmp_path):
    text = 'from torch.utils.data import DataLoader\nx = "😀 é"; loader = DataLoader(ds, batch_size=64)\n'
    async with session(NEOVIM, tmp_path) as client:  # Neovim 0.11 offers utf-8 first
        assert encoding(client) == "utf-8"
        uri = open_py(client, tmp_path / "train.py", text)
        (diag,) = await pull(client, uri)
        line = text.splitlines()[1]
        assert diag.range.start.character == len(line[: line.index("DataLoader")].encode("utf-8"))


@timed(180)
async def test_three_hundred_documents_without_torch(tmp_path):
    body = "import torch\n" + SAMPLE + "".join(
        f"def step_{i}(model, batch):\n    out = model(batch.cuda())\n    return out.sum()\n" for i in range(10))
    async with session(NEOVIM, tmp_path) as client:
        uris = [open_py(client, tmp_path / f"train_{i}.py", body) for i in range(300)]
        results = await asyncio.gather(*(pull(client, uri) for uri in uris))
        assert all("TPL101" in codes(items) for items in results)
        info = await server_info(client)
        assert info["documents"] == 300
        assert info["torch_loaded"] is False
        assert 0 < info["rss_kb"] < 400 * 1024


def test_analyses_pause_collection_and_freeze_what_they_leave():
    """No collection runs during an analysis, and what it leaves is frozen instead of walked
    by the next collections (while the diagnostics are sent); an idle moment collects all,
    cyclic garbage that an analysis left included."""
    import gc
    import weakref

    from perf_lint.server.memory import ANALYSES_RUNNING, IdleCollector

    class Node:
        pass

    gc.unfreeze()
    with ANALYSES_RUNNING:
        assert not gc.isenabled()
        with ANALYSES_RUNNING:  # a second analysis at once: collection waits for both
            pass
        assert not gc.isenabled()
        survivors = [Node() for _ in range(1000)]
        survivors[0].self = survivors[0]  # a cycle: only a collection frees it
    assert gc.isenabled() and gc.get_freeze_count() >= len(survivors)
    gone = weakref.ref(survivors[0])
    del survivors
    gc.collect()
    assert gone() is not None  # frozen: left alone by collections while typing goes on
    IdleCollector.collect()
    assert gone() is None and gc.get_freeze_count() == 0 and gc.isenabled()
