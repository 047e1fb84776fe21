"""Names that moved or were renamed in #34 still import from their old places: the renamed
classes and loaders with a DeprecationWarning naming the new name, the moved helpers as the
same objects."""

from __future__ import annotations

import importlib
import warnings

import pytest

RENAMED = [
    ("rasplab.crasp", "Program", "rasplab.crasp.ir", "CraspProgram"),
    ("rasplab.crasp.ir", "Program", "rasplab.crasp.ir", "CraspProgram"),
    ("rasplab.crasp", "program", "rasplab.crasp.build", "crasp_program"),
    ("rasplab.crasp.build", "program", "rasplab.crasp.build", "crasp_program"),
    ("rasplab.crasp.load", "load_program", "rasplab.crasp.load", "load_crasp_program"),
    ("rasplab.learned.decompile", "Extracted", "rasplab.learned.decompile", "LearnedProgram"),
    (
        "rasplab.learned.decompile",
        "load_program",
        "rasplab.learned.decompile",
        "load_learned_program",
    ),
]

MOVED = [
    ("rasplab.harness.checkpoint", "atomic_write_bytes", "rasplab.files"),
    ("rasplab.harness.checkpoint", "atomic_write_text", "rasplab.files"),
    ("rasplab.reports.plots", "save_figure", "rasplab.plotting"),
    ("rasplab.crasp_compiler", "DEFAULT_MAX_LENGTH", "rasplab.crasp_compiler.precision"),
]


@pytest.mark.parametrize(("old_module", "old", "new_module", "new"), RENAMED)
def test_an_old_name_warns_and_is_the_new_object(old_module, old, new_module, new):
    module = importlib.import_module(old_module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(module, old)
    assert value is getattr(importlib.import_module(new_module), new)
    messages = [str(w.message) for w in caught if w.category is DeprecationWarning]
    assert messages == [
        f"{old_module}.{old} is deprecated: use {new_module}.{new} (the old name goes in the "
        "next release)"
    ]


def test_from_import_of_an_old_name_works_with_a_warning():
    with pytest.warns(DeprecationWarning, match="use rasplab.crasp.ir.CraspProgram"):
        from rasplab.crasp import Program
    from rasplab.crasp import CraspProgram

    assert Program is CraspProgram


def test_from_import_of_the_old_crasp_builder_name_works_with_a_warning():
    with pytest.warns(DeprecationWarning, match="use rasplab.crasp.build.crasp_program"):
        from rasplab.crasp import program
    from rasplab.crasp import Q, count, crasp_program

    assert program is crasp_program
    assert program("t", count(Q("a")) > 0, "ab").name == "t"


@pytest.mark.parametrize(("old_module", "name", "new_module"), MOVED)
def test_a_moved_helper_is_the_same_object_at_its_old_place(old_module, name, new_module):
    old = getattr(importlib.import_module(old_module), name)
    assert old is getattr(importlib.import_module(new_module), name)


def test_an_unknown_name_is_still_an_attribute_error():
    import rasplab.crasp.ir

    with pytest.raises(AttributeError, match="has no attribute 'Programme'"):
        rasplab.crasp.ir.Programme  # noqa: B018
