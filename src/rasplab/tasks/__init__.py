"""Benchmark tasks: one protocol (:class:`Task`), a registry, one module per family."""

from rasplab.tasks.base import Example, Task, get_task, register, task_factory, task_names

__all__ = ["Example", "Task", "get_task", "register", "task_factory", "task_names"]
