"""libcst helpers that rules use to build fixes while keeping formatting and comments."""

from __future__ import annotations

import libcst as cst

from ..nodes import remembered


def with_keywords(call: cst.Call, values: dict[str, str]) -> cst.Call:
    """`call` with keyword arguments set: existing ones get the new value, missing ones
    are appended in the call's own layout (one per line in a multi-line call). The same
    node for the same call and values (an unchanged statement's fix renders once)."""
    return remembered(with_keywords, call, lambda: _with_keywords(call, values), *values.items())


def _with_keywords(call: cst.Call, values: dict[str, str]) -> cst.Call:
    args = list(call.args)
    missing = dict(values)
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value in missing:
            args[index] = arg.with_changes(value=cst.parse_expression(missing.pop(arg.keyword.value)))
    if not missing:
        return call.with_changes(args=args)
    if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma):
        separator = args[-2].comma.whitespace_after
    elif type(call.whitespace_before_args) is cst.ParenthesizedWhitespace:
        separator = call.whitespace_before_args
    else:
        separator = cst.SimpleWhitespace(" ")
    if type(separator) is cst.ParenthesizedWhitespace:  # no comment rides along
        separator = separator.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])
    final_comma = args[-1].comma if args else cst.MaybeSentinel.DEFAULT
    if args:
        last_ws = final_comma.whitespace_after if type(final_comma) is cst.Comma else None
        if (
            type(final_comma) is cst.Comma
            and type(last_ws) is cst.ParenthesizedWhitespace
            and type(separator) is cst.ParenthesizedWhitespace
        ):
            # `x=1,  # note` + newline + closing indent: keep the comment on x's line,
            # give the new last argument the closing indent.
            args[-1] = args[-1].with_changes(comma=final_comma.with_changes(
                whitespace_after=last_ws.with_changes(last_line=separator.last_line)))
            final_comma = cst.Comma(whitespace_after=separator.with_changes(last_line=last_ws.last_line))
        else:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=separator))
    new = [
        cst.Arg(
            keyword=cst.Name(name),
            value=cst.parse_expression(code),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            comma=cst.Comma(whitespace_after=separator),
        )
        for name, code in missing.items()
    ]
    new[-1] = new[-1].with_changes(comma=final_comma)
    return call.with_changes(args=args + new)


def replace_argument(call: cst.Call, target: cst.Arg, code: str) -> cst.Call:
    """`call` with the value of argument `target` (positional or keyword) replaced."""
    args = [arg.with_changes(value=cst.parse_expression(code)) if arg is target else arg for arg in call.args]
    return call.with_changes(args=args)


def root_name(expr: cst.BaseExpression) -> str | None:
    """The variable an expression starts from: `batch["x"].y` -> "batch"."""
    while True:  # `type(x) is C`: see perf_lint.analyzers.nodes
        if type(expr) is cst.Name:
            return expr.value
        if type(expr) is cst.Attribute or type(expr) is cst.Subscript:
            expr = expr.value
        elif type(expr) is cst.Call and type(expr.func) is cst.Attribute:
            expr = expr.func.value
        else:
            return None


def names_in_target(target: cst.BaseExpression) -> list[str]:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) is cst.Tuple or type(target) is cst.List:
        return [name for element in target.elements for name in names_in_target(element.value)]
    if type(target) is cst.StarredElement:
        return names_in_target(target.value)
    return []
