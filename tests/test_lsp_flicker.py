"""No flicker while typing: while a statement does not parse, every other finding stays where
it was, and the half-typed statement's own findings stay (stretched over the edit) until it
parses again; then fresh findings replace them. In `.py` files and notebook cells, pushed
(VS Code) and pulled (Neovim)."""

from __future__ import annotations

import pytest

from tests.lsp_client import (
    CODE, NEOVIM, VSCODE, Notebook, diagnostics, edit, encoding, open_py, pull, pushed, server_info, session, timed,
    units,
)

BOTH = pytest.mark.parametrize("kind", [VSCODE, NEOVIM])

TRAIN = """import torch
from torch.utils.data import DataLoader

model = torch.nn.DataParallel(torch.nn.Linear(8, 2))
loader = DataLoader(ds, batch_size=64)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train():
    torch.autograd.set_detect_anomaly(True)
    for x in loader:
        optimizer.zero_grad(set_to_none=False)
        model(x.cuda()).sum().backward()
        optimizer.step()
"""
EVERY = ["TPL304", "TPL101", "TPL102", "TPL405", "TPL503"]


def spans(diags) -> dict[str, tuple[int, int, int, int]]:
    return {d.code: (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
            for d in diags}


def column(client, uri: str, line: int, needle: str) -> int:
    text = client.texts[uri].splitlines()[line]
    return units(text[: text.index(needle)], encoding(client))


@BOTH
@timed(120)
async def test_a_half_typed_statement_keeps_every_finding_until_it_parses(tmp_path, kind):
    async with session(kind, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", TRAIN)
        before = spans(await diagnostics(client, kind, uri, 1))
        assert list(before) == EVERY
        published = len(client.published)

        at = column(client, uri, 4, "64)")
        version = edit(client, uri, (4, at), (4, at + 3), "")  # loader = DataLoader(ds, batch_size=
        broken = spans(await diagnostics(client, kind, uri, version))
        assert {code: broken[code] for code in ("TPL304", "TPL405", "TPL503")} == \
            {code: before[code] for code in ("TPL304", "TPL405", "TPL503")}
        assert broken["TPL101"] == broken["TPL102"] == (4, before["TPL101"][1], 4, at)  # cut where the text was

        version = edit(client, uri, (4, at), (4, at), "32, num_workers=4")  # typed on, still open
        assert spans(await diagnostics(client, kind, uri, version)) == broken
        for params in client.published[published:]:  # no push in between went without any of them
            assert [d.code for d in params.diagnostics] == EVERY

        end = at + len("32, num_workers=4")
        version = edit(client, uri, (4, end), (4, end), ")")  # parses: fresh findings
        fresh = spans(await diagnostics(client, kind, uri, version))
        assert list(fresh) == ["TPL304", "TPL102", "TPL405", "TPL503"]  # num_workers is set now
        assert fresh["TPL102"] == (4, before["TPL102"][1], 4, end + 1)

        at = column(client, uri, 11, "False)")  # a line of a loop body in a function
        version = edit(client, uri, (11, at), (11, at + 6), "")
        inside = spans(await diagnostics(client, kind, uri, version))
        assert inside == {**fresh, "TPL503": (11, fresh["TPL503"][1], 11, at)}
        version = edit(client, uri, (11, at), (11, at), "True)")
        assert list(spans(await diagnostics(client, kind, uri, version))) == ["TPL304", "TPL102", "TPL405"]


CELL_LOADER = "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=64)\n"
CELL_LOOP = """model = torch.nn.Linear(8, 2).cuda()
opt = torch.optim.SGD(model.parameters())
for x in loader:
    x = x.cuda()
    opt.zero_grad(set_to_none=False)
    model(x).sum().backward()
"""


@BOTH
@timed(120)
async def test_a_half_typed_cell_keeps_its_findings_and_those_it_gives_other_cells(tmp_path, kind):
    """TPL102 in the first cell exists because the second copies batches to the GPU: while the
    second does not parse, the analysis cannot see that, and the finding must not blink."""

    async def shown(nb: Notebook, index: int, version: int | None = None):
        if kind == NEOVIM:
            return spans(await pull(client, nb.uri_of(index)))
        if version is not None:
            return spans(await pushed(client, nb.uri_of(index), version))
        await server_info(client)  # every push before this answer has arrived
        return spans(client.diagnostics[nb.uri_of(index)])

    async with session(kind, tmp_path) as client:
        nb = Notebook(client, tmp_path / "train.ipynb", [(CODE, CELL_LOADER), (CODE, CELL_LOOP)])
        loop = await shown(nb, 1, 1)
        loader = await shown(nb, 0, 1)
        assert list(loader) == ["TPL101", "TPL102"] and list(loop) == ["TPL503"]

        version = nb.set_text(1, CELL_LOOP.replace("set_to_none=False)", "set_to_none="))
        at = CELL_LOOP.splitlines()[4].index("False)")
        assert await shown(nb, 1, version) == {"TPL503": (4, loop["TPL503"][1], 4, at)}
        assert await shown(nb, 0) == loader

        version = nb.set_text(1, CELL_LOOP.replace("set_to_none=False)", "set_to_none=True)"))
        assert await shown(nb, 1, version) == {}
        assert await shown(nb, 0) == loader
