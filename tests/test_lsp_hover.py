"""Hover over a finding or a `# noqa` code: the finding's message, a sentence or two from the
rule's doc and a link to the rule's page, in Markdown or in plain text as the client asks."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp_client import NEOVIM, SAMPLE, VSCODE, diagnostics, encoding, open_py, session, timed, units

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"
URL = "https://github.com/perf-lint/perf-lint/blob/main/docs/rules/{}.md"
TEXT = """import torch
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=64)
other = DataLoader(ds)  # noqa: TPL101
for x in loader:
    x = x.cuda()
"""


def what_it_does(code: str) -> str:
    """The "What it does" paragraph of the rule's page, on one line."""
    page = (DOCS / f"{code}.md").read_text()
    return " ".join(re.search(r"## What it does\n(.*?)\n\n", page, re.DOTALL).group(1).split())


async def hover(client, uri: str, line: int, needle: str) -> types.Hover | None:
    text = client.texts[uri].splitlines()[line]
    col = units(text[: text.index(needle) + 1], encoding(client))
    return await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line, col))), 30)


@pytest.mark.parametrize("kind", [VSCODE, NEOVIM])
@timed(60)
async def test_hover_shows_the_message_a_summary_and_the_link(tmp_path, kind):
    async with session(kind, tmp_path) as client:
        uri = open_py(client, tmp_path / "train.py", TEXT)
        messages = {d.code: d.message for d in await diagnostics(client, kind, uri, 1)}
        assert sorted(messages) == ["TPL101", "TPL102"]  # both on the first DataLoader

        on_finding = await hover(client, uri, 2, "batch_size")
        assert on_finding.contents.kind == types.MarkupKind.Markdown
        assert on_finding.range.start.line == on_finding.range.end.line == 2
        first, second = on_finding.contents.value.split("\n\n---\n\n")
        for code, block in (("TPL101", first), ("TPL102", second)):
            title, message, summary, link = block.split("\n\n")
            assert title.startswith(f"**{code}** ") and message == messages[code]
            assert what_it_does(code).startswith(summary) and summary.endswith(".")
            assert 1 <= len(re.findall(r"[.!?](?:\s|$)", summary)) <= 2
            assert link == f"[{code} documentation]({URL.format(code)})"
        assert "#" not in on_finding.contents.value  # no heading, none of the page's sections

        on_noqa = await hover(client, uri, 3, "TPL101")
        title, summary, link = on_noqa.contents.value.split("\n\n")
        assert title == "**TPL101** dataloader-sync-loading" and what_it_does("TPL101").startswith(summary)
        assert link == f"[TPL101 documentation]({URL.format('TPL101')})"
        assert (on_noqa.range.start.line, on_noqa.range.end.character - on_noqa.range.start.character) == (3, 6)

        assert await hover(client, uri, 0, "import") is None


@timed(60)
async def test_hover_in_plain_text_for_a_client_without_markdown(tmp_path):
    def plain(caps: types.ClientCapabilities) -> None:
        caps.text_document.hover.content_format = [types.MarkupKind.PlainText]

    async with session(NEOVIM, tmp_path, adjust=plain) as client:
        uri = open_py(client, tmp_path / "train.py", SAMPLE)
        messages = {d.code: d.message for d in await diagnostics(client, NEOVIM, uri)}
        found = await hover(client, uri, 1, "ds")
        assert found.contents.kind == types.MarkupKind.PlainText
        title, message, summary, link = found.contents.value.split("\n\n")
        assert (title, message) == ("TPL101 dataloader-sync-loading", messages["TPL101"])
        assert what_it_does("TPL101").startswith(summary)
        assert link == f"Documentation: {URL.format('TPL101')}"
