"""``rasplab --help`` starts without torch (or numpy): every command module keeps heavy imports
inside its functions, so listing the commands (and each command's help) stays fast."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from rasplab.cli.commands import COMMANDS, GROUPS

# In a fresh interpreter: every --help of the table, then which heavy modules got imported.
_SCRIPT = """
import json, sys
from rasplab.cli import main
codes = {}
for words in json.loads(sys.argv[1]):
    try:
        main([*words, "--help"])
    except SystemExit as done:
        codes[" ".join(words)] = done.code
HEAVY = ("torch", "safetensors", "matplotlib", "numpy")
heavy = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
print(json.dumps({"codes": codes, "heavy": heavy}), file=sys.stderr)
"""


def _help_everything() -> dict:
    """Run ``rasplab [WORDS] --help`` for the root, each group and each command, in one
    fresh process; the JSON it reports on stderr."""
    paths = [[], *([g] for g in GROUPS), *(c.path.split() for c in COMMANDS)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, json.dumps(paths)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stderr.strip().splitlines()[-1])


def test_help_of_every_command_imports_no_torch_or_numpy():
    report = _help_everything()
    assert report["heavy"] == [], f"--help imported {report['heavy'][:5]}"
    assert set(report["codes"].values()) == {0}, report["codes"]
    assert len(report["codes"]) == 1 + len(GROUPS) + len(COMMANDS)


def test_the_table_names_every_command_by_its_module():
    """``rasplab X`` lives in cli/X.py, ``rasplab crasp X`` in cli/crasp/X.py (bounds: one
    module for its two subcommands)."""
    for command in COMMANDS:
        words = command.path.split()
        module = command.function.__module__
        expected = "rasplab.cli." + ".".join(w.replace("-", "_") for w in words)
        if words[0] == "bounds":
            expected = "rasplab.cli.bounds"
        assert module == expected, (command.path, module)
