"""``rasplab rasp programs``: Tracr's RASP library as ``lib:NAME``, with the arguments used."""

from __future__ import annotations

import json

import typer


def programs_command(
    as_json: bool = typer.Option(False, "--json", help="One JSON object per program."),
) -> None:
    """List Tracr's RASP library (lib:NAME) and the arguments each is built with."""
    # start-up time: the RASP language and its library
    # start-up time: the RASP library
    from rasplab.rasp.load import LIBRARY

    width = max(len(name) for name in LIBRARY) + 4
    for name, (_, call) in LIBRARY.items():
        if as_json:
            print(json.dumps({"name": f"lib:{name}", "builds": call}))
        else:
            print(f"{'lib:' + name:<{width}}  {call}")
