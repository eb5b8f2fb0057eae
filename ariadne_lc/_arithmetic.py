"""Safe arithmetic for the calculator tools of the demo agent and of :mod:`ariadne_lc.testing`.

The expression comes from a model, so it is parsed with :mod:`ast` and only numbers, the four operations,
floor division, modulo, powers and parentheses are evaluated; names, calls and attributes are refused. Sizes are
bounded because ``9**9**9`` is valid arithmetic that would hang the process.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable

__all__ = ["CalculatorError", "evaluate", "evaluate_arithmetic", "format_number"]

_MAX_EXPRESSION_CHARS = 200
_MAX_EXPONENT = 100
_MAX_MAGNITUDE = 1e100

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}

# Small models write arithmetic the way people do: "6 x 7", "2^3", "$1,200", "12 ÷ 4 =".
_TIMES = re.compile(r"(?<=[\d)\s])[x×](?=[\s\d(])")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


class CalculatorError(ValueError):
    """The text is not an arithmetic expression the calculator accepts."""


def _normalise(expression: str) -> str:
    text = expression.strip().strip("`").strip()
    text = text.rstrip("=").strip()
    text = text.replace("$", "").replace("€", "").replace("£", "")
    text = _THOUSANDS.sub("", text)
    text = _TIMES.sub("*", text)
    return text.replace("÷", "/").replace("^", "**").replace("−", "-")


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
            raise CalculatorError(f"exponent {right} is too large")
        try:
            result = _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise CalculatorError("division by zero") from None
        if isinstance(result, complex) or abs(result) > _MAX_MAGNITUDE:
            raise CalculatorError("result out of range")
        return result
    raise CalculatorError(f"unsupported element: {type(node).__name__}")


def format_number(value: float) -> str:
    """Render a result the way a person writes it: ``42`` not ``42.0``, at most 10 significant decimals."""
    if isinstance(value, int) or (math.isfinite(value) and float(value).is_integer()):
        return str(int(value))
    return f"{value:.10g}"


def evaluate_arithmetic(expression: str) -> str:
    """Evaluate an arithmetic expression safely and return the result as text (:func:`format_number`).

    Examples:
        >>> evaluate_arithmetic("(3 + 4) * 2"), evaluate_arithmetic("7 / 2")
        ('14', '3.5')
    """
    return format_number(evaluate(expression))


def evaluate(expression: str) -> float:
    """Evaluate an arithmetic expression safely.

    Args:
        expression: e.g. ``"(3 + 4) * 2"``, ``"6 x 7"``, ``"2^10"``, ``"$1,200 / 4"``.

    Raises:
        CalculatorError: the text is empty, too long, not arithmetic, or the result is out of range.

    Examples:
        >>> evaluate("6 x 7")
        42
    """
    text = _normalise(expression)
    if not text:
        raise CalculatorError("empty expression")
    if len(text) > _MAX_EXPRESSION_CHARS:
        raise CalculatorError(f"expression longer than {_MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculatorError(f"not an arithmetic expression: {expression!r}") from None
    return _eval(tree)
