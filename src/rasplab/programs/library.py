"""Imports every program family module so that each registers its programs."""

from rasplab.programs import (
    addition,  # noqa: F401
    addition_alta,  # noqa: F401
    dyck,  # noqa: F401
    majority,  # noqa: F401
    parity,  # noqa: F401
    reverse,  # noqa: F401
    scan,  # noqa: F401
    sort_unique,  # noqa: F401
    subleq,  # noqa: F401
)
