"""Imports every task family module so that each registers its tasks."""

import rasplab.tasks.addition  # noqa: F401
import rasplab.tasks.algorithmic  # noqa: F401
import rasplab.tasks.bounds  # noqa: F401
import rasplab.tasks.chomsky  # noqa: F401
import rasplab.tasks.chomsky_cs  # noqa: F401
import rasplab.tasks.languages  # noqa: F401
import rasplab.tasks.ptg.task  # noqa: F401
import rasplab.tasks.rasp  # noqa: F401
import rasplab.tasks.rasp_addition  # noqa: F401
import rasplab.tasks.rasp_dyck  # noqa: F401
import rasplab.tasks.scan  # noqa: F401
