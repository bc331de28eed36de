"""Errors that mean the user's input is wrong: the CLI turns them into exit code 2 and one line."""


class InputError(ValueError):
    """Bad user input (scenario, argument, data file). The message names file, field, value and expectation."""
