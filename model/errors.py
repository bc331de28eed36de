"""Errors that mean the user's input is wrong, and the one-line text of errors the environment causes.

The CLI turns an `InputError` into exit code 2 and one line; an `OSError` (permissions, a full disk, a file where
a folder is expected) into exit code 1 and one line (`environment_message`).
"""

from __future__ import annotations

import errno
import math
from typing import Any


class InputError(ValueError):
    """Bad user input (scenario, argument, data file). The message names file, field, value and expectation."""


def nearest(name: str, candidates: list[str]) -> str:
    """' (did you mean ...?)' naming the closest candidate: one that starts with `name`, else the most similar;
    '' when nothing is close."""
    import difflib

    starts = sorted((c for c in candidates if name and c.startswith(name)), key=len)
    match = starts[:1] or difflib.get_close_matches(name, candidates, n=1, cutoff=0.5)
    return f" (did you mean {match[0]!r}?)" if match else ""


_ENVIRONMENT_HINTS = {
    errno.EACCES: "no permission to write there",
    errno.EPERM: "no permission to write there",
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.ENOTDIR: "a file is in the way where a folder is expected",
    errno.EISDIR: "a folder is in the way where a file is expected",
    errno.EEXIST: "something is already there",
    errno.EBUSY: "the folder is in use (the current folder or a mount point?)",
    errno.ENOTEMPTY: "the folder is not empty",
}


def environment_message(exc: OSError) -> str:
    """One line for an operating-system error: the file, what happened, and what it usually means."""
    where = exc.filename if exc.filename is not None else ""
    if exc.filename2 is not None:
        where = f"{where} -> {exc.filename2}"
    text = exc.strerror or str(exc) or type(exc).__name__
    hint = _ENVIRONMENT_HINTS.get(exc.errno or 0)
    text = f"{text} ({hint})" if hint and hint.lower() not in text.lower() else text
    return f"{where}: {text}" if where else text


def strict_json_value(value: Any) -> Any:
    """`value` with every non-finite float (NaN, +-infinity) replaced by None, recursively (dicts, lists, tuples).

    airace's JSON is strict (RFC 8259): a number that is not finite is written as `null`, never as `NaN` or
    `Infinity`, which strict parsers reject."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: strict_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json_value(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "shape", None) == ():
        return strict_json_value(value.item())  # numpy scalars
    return value


def dumps_strict(value: Any, **kwargs: Any) -> str:
    """`json.dumps` of `value` as strict JSON: non-finite numbers become `null` (`strict_json_value`), objects
    JSON does not know become strings, and anything left that is not JSON raises instead of printing `NaN`."""
    import json

    kwargs.setdefault("default", str)
    return json.dumps(strict_json_value(value), allow_nan=False, **kwargs)
