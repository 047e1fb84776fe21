"""The rich progress bars on stderr that training and sweeps draw (description, bar, M/N, info)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def start_progress() -> Progress:
    """A started rich ``Progress`` on stderr; its tasks show a free-text ``info`` field."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    progress.start()
    return progress


class PrepBar:
    """A progress bar while a sweep prepares: grid points expanded into configs, then runs
    registered in the store."""

    def __init__(self, name: str, points: int) -> None:
        self.progress = start_progress()
        self.task = self.progress.add_task(f"preparing {name}", total=points, info="grid points")

    def advance(self) -> None:
        """One more grid point expanded (or run registered)."""
        self.progress.advance(self.task)

    def registering(self, runs: int) -> None:
        """Switch to counting the ``runs`` registered in the store."""
        self.progress.reset(self.task, total=runs, info="runs registered")

    def close(self) -> None:
        """Stop drawing the bar."""
        self.progress.stop()


class SweepBar:
    """A progress bar while a sweep runs: runs finished out of the grid, and the last result."""

    def __init__(self, name: str, total: int, done: int) -> None:
        self.progress = start_progress()
        info = f"{done} already done" if done else ""
        self.task = self.progress.add_task(f"sweep {name}", total=total, completed=done, info=info)

    def advance(self, exp, bins: dict | None) -> None:
        """One more run (config ``exp``) finished; ``bins`` is None when it failed."""
        what = "failed" if bins is None else " ".join(f"{k}:{v:.2f}" for k, v in bins.items())
        info = f"{exp.task} {exp.variant} s{exp.seed} {what}"
        self.progress.update(self.task, advance=1, info=info)

    def close(self) -> None:
        """Stop drawing the bar."""
        self.progress.stop()
