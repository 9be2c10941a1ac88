"""The one ``Definitions`` object: every module of ``assets/`` that defines ``defs`` is merged here.

Why discovery instead of a hand-kept list (as dagster-open-platform loads each ``defs/<source>/``):
a new source is a new module with a ``defs = dg.Definitions(...)`` at its end, and nothing else
changes. Modules without ``defs`` (``resources``) are shared helpers.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import dagster as dg

import assets
from assets.resources import default_resources


def source_modules() -> list[ModuleType]:
    """Every ``assets.<name>`` module (or package) that defines ``defs``, in name order."""
    found = []
    for info in sorted(pkgutil.iter_modules(assets.__path__), key=lambda i: i.name):
        if info.name == "definitions":
            continue
        module = importlib.import_module(f"assets.{info.name}")
        if isinstance(getattr(module, "defs", None), dg.Definitions):
            found.append(module)
    return found


def run_executor(name: str | None = None) -> dg.ExecutorDefinition:
    """The executor of every job (``LEXPIPE_RUN_EXECUTOR``, see ``core.settings.Settings.run_executor``):
    in one process by default, because a refresh's steps are a chain and a process per step
    re-imports the code location for each of them."""
    from core.settings import Settings

    name = name or Settings().run_executor
    return dg.in_process_executor if name == "in_process" else dg.multiprocess_executor


def build_definitions(resources: dict | None = None) -> dg.Definitions:
    # resources a caller leaves out (e.g. benchmark_config) come from the settings defaults
    resources = {**default_resources(), **resources} if resources else default_resources()
    return dg.Definitions.merge(*(m.defs for m in source_modules()),
                                dg.Definitions(resources=resources, executor=run_executor()))


defs = build_definitions()
