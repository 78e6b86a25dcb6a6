"""Notebooks over LSP 3.17 notebook sync, and `# %%` cells in `.py` files."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from tests.lsp_client import (
    CODE, MARKUP, NEOVIM, VSCODE, Notebook, apply_workspace_edit, assert_parses, codes, diagnostics, open_py, pushed,
    session, timed,
)

BOTH = pytest.mark.parametrize("kind", [VSCODE, NEOVIM])
IMPORT = "from torch.utils.data import DataLoader\n"
LOADER = "loader = DataLoader(ds, batch_size=64)\n"
# a notebook that never uses a GPU is a CPU session, and a loader nothing reads loads nothing: no TPL101
READ = "for loaded in (loader, other, val):\n    for batch in loaded:\n        model(batch)\n"
GPU = "model = Net().cuda()\n" + READ
TIMED = '%%time\nimport torch\nx = torch.randn(10, device="cuda")\ny = x @ x\n'


@BOTH
@timed(90)
async def test_cells_are_analyzed_together_and_reported_per_cell(tmp_path, kind):
    async with session(kind, tmp_path) as client:
        assert client.init_result.capabilities.notebook_document_sync is not None
        nb = Notebook(client, tmp_path / "train.ipynb",
                      [(MARKUP, "# Training\n"), (CODE, IMPORT), (CODE, "ds = make_dataset()\n" + LOADER), (CODE, GPU)])
        (diag,) = await diagnostics(client, kind, nb.uri_of(2), 1)  # the import in cell 1 resolves it
        assert diag.code == "TPL101" and diag.range.start.line == 1
        assert await diagnostics(client, kind, nb.uri_of(1), 1) == []

        nb.set_text(2, "ds = make_dataset()\nloader = DataLoader(ds, num_workers=2)\n")
        assert await diagnostics(client, kind, nb.uri_of(2), client.versions[nb.uri_of(2)]) == []

        added = nb.insert(2, CODE, "val = DataLoader(make_dataset())\n")  # after the import; cell 2 moves down
        assert codes(await diagnostics(client, kind, added, 1)) == ["TPL101"]
        nb.remove(2)
        if kind == VSCODE:
            assert await pushed(client, added, None, lambda d: not d) == []
        nb.close()
        if kind == VSCODE:
            for _, uri, _ in nb.cells:
                assert await pushed(client, uri, None, lambda d: not d) == []


@timed(60)
async def test_timing_magic_cell_does_not_break_the_notebook(tmp_path):
    async with session(VSCODE, tmp_path, settings={"showSyntaxErrors": True}) as client:
        nb = Notebook(client, tmp_path / "timing.ipynb", [(CODE, TIMED), (CODE, IMPORT + LOADER + READ)])
        assert codes(await pushed(client, nb.uri_of(1), 1)) == ["TPL101"]
        assert "TPL000" not in codes(await pushed(client, nb.uri_of(0), 1))


@timed(60)
async def test_broken_cell_keeps_its_diagnostics_and_others_update(tmp_path):
    async with session(VSCODE, tmp_path) as client:
        nb = Notebook(client, tmp_path / "train.ipynb", [(CODE, IMPORT + LOADER), (CODE, "other = DataLoader(ds)\n"), (CODE, GPU)])
        assert codes(await pushed(client, nb.uri_of(0), 1)) == ["TPL101"]
        assert codes(await pushed(client, nb.uri_of(1), 1)) == ["TPL101"]
        version = nb.set_text(0, "import (\n" + IMPORT + LOADER)
        (kept,) = await pushed(client, nb.uri_of(0), version)
        assert kept.range.start.line == 2


@BOTH
@timed(90)
async def test_notebook_fix_all(tmp_path, kind):
    async with session(kind, tmp_path) as client:
        nb = Notebook(client, tmp_path / "train.ipynb",
                      [(CODE, IMPORT + LOADER), (MARKUP, "text"), (CODE, TIMED), (CODE, "val = DataLoader(ds)\n" + READ)])
        assert codes(await diagnostics(client, kind, nb.uri_of(3), 1)) == ["TPL101"]
        result = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=nb.uri_of(0)),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[], only=["notebook.source.fixAll"]))), 30)
        (action,) = result
        assert action.kind == "notebook.source.fixAll.perf-lint"
        if action.edit is None:
            action = await asyncio.wait_for(client.code_action_resolve_async(action), 30)
        changed = apply_workspace_edit(client, action.edit)
        assert {nb.uri_of(0), nb.uri_of(3)} <= set(changed) and nb.uri_of(1) not in changed
        for uri, text in changed.items():
            assert_parses(text, notebook_cell=True)
        assert "num_workers=4" in changed[nb.uri_of(0)] and "num_workers=4" in changed[nb.uri_of(3)]
        for index, (_, uri, _) in enumerate(nb.cells):
            if uri in changed:
                nb.set_text(index, changed[uri])
        for index in (0, 3):
            assert await diagnostics(client, kind, nb.uri_of(index), client.versions[nb.uri_of(index)]) == []


@timed(60)
async def test_code_lenses_on_cells(tmp_path):
    text = "# %%\nimport torch\n\n# %% train\nfrom torch.utils.data import DataLoader\n" + LOADER
    async with session(VSCODE, tmp_path) as client:
        uri = open_py(client, tmp_path / "script.py", text)
        lenses = await asyncio.wait_for(client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))), 30)
        # Only the cell with a finding has something to measure.
        assert [(lens.range.start.line, lens.command.command, list(lens.command.arguments)) for lens in lenses] == [
            (3, "perf-lint.profile", [uri, {"cell": 1}, None]),
        ]
        nb = Notebook(client, tmp_path / "nb.ipynb", [(MARKUP, "# x"), (CODE, IMPORT + LOADER), (CODE, IMPORT), (CODE, GPU)])
        cell_lenses = await asyncio.wait_for(client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=nb.uri_of(1)))), 30)
        assert [list(lens.command.arguments) for lens in cell_lenses] == [[nb.uri_of(1), {"cell": 1}, None]]
        assert list(await asyncio.wait_for(client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=nb.uri_of(2)))), 30)) == []
        plain = open_py(client, tmp_path / "plain.py", IMPORT + LOADER)
        assert list(await asyncio.wait_for(client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=plain))), 30)) == []
