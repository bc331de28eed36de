"""Mesa's core classes without the parts of Mesa this model never uses.

`import mesa` runs `mesa/__init__.py`, which imports Mesa's grids and networks (scipy.spatial, networkx) and its
batch runner (tqdm, asyncio, multiprocessing): about half a second of CPU in every fresh process, a quarter of an
`airace run`. Importing only `mesa.model` does not avoid it (Python runs a package's `__init__` before any of its
modules, and `mesa.model` imports `mesa.experimental`, whose `__init__` imports the continuous space). So, unless
Mesa is already imported, this module registers the `mesa` and `mesa.experimental` packages without running their
`__init__` and imports the modules the market uses. Nothing is lost: the first access to any other attribute of
either package (`mesa.space`, `mesa.__version__`, ...) runs its `__init__` then, so code that needs the rest of Mesa
(the browser app) gets all of it. The market's modules import Mesa from here.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

# what the package itself exports that Mesa's own core modules import from it (`from mesa import Agent`)
_EXPORTS = {"mesa": {"Agent": "mesa.agent", "Model": "mesa.model", "DataCollector": "mesa.datacollection"},
            "mesa.experimental": {}}


def _deferred_package(name: str) -> None:
    """Register package `name` with its `__init__` deferred until an attribute it defines is first asked for."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    package = importlib.util.module_from_spec(spec)
    exports = _EXPORTS[name]
    initialised: list[bool] = []

    def __getattr__(attribute: str):  # noqa: N807 - a module's __getattr__ (PEP 562)
        if attribute in exports:
            value = getattr(importlib.import_module(exports[attribute]), attribute)
            setattr(package, attribute, value)
            return value
        wanted = not attribute.startswith("__") or attribute in ("__version__", "__all__")
        if wanted and not initialised:
            initialised.append(True)
            spec.loader.exec_module(package)  # the rest of the package, now that it is asked for
            if attribute in package.__dict__:
                return package.__dict__[attribute]
        raise AttributeError(f"module {name!r} has no attribute {attribute!r}")

    package.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules[name] = package


def _import_core() -> ModuleType:
    if "mesa" not in sys.modules:
        _deferred_package("mesa")
        _deferred_package("mesa.experimental")
    return sys.modules.get("mesa") or importlib.import_module("mesa")


_import_core()

from mesa.agent import Agent  # noqa: E402 - after the packages are registered
from mesa.agentset import AgentSet  # noqa: E402
from mesa.datacollection import DataCollector  # noqa: E402
from mesa.experimental.scenarios import Scenario  # noqa: E402
from mesa.model import Model  # noqa: E402

__all__ = ["Agent", "AgentSet", "DataCollector", "Model", "Scenario"]
