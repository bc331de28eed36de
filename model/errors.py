"""Errors that mean the user's input is wrong: the CLI turns them into exit code 2 and one line."""


class InputError(ValueError):
    """Bad user input (scenario, argument, data file). The message names file, field, value and expectation."""


def nearest(name: str, candidates: list[str]) -> str:
    """' (did you mean ...?)' naming the closest candidate: one that starts with `name`, else the most similar;
    '' when nothing is close."""
    import difflib

    starts = sorted((c for c in candidates if name and c.startswith(name)), key=len)
    match = starts[:1] or difflib.get_close_matches(name, candidates, n=1, cutoff=0.5)
    return f" (did you mean {match[0]!r}?)" if match else ""
