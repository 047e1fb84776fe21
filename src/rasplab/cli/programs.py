"""``rasplab programs``: list the ALTA program library, one name and description a line."""

from __future__ import annotations


def programs_command() -> None:
    """List the program library: name and one-line description."""
    from rasplab.programs import get_program, program_names  # start-up time

    names = program_names()
    width = max((len(n) for n in names), default=0)
    for name in names:
        print(f"{name:<{width}}  {get_program(name).description}")
