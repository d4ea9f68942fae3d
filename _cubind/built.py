"""What this installation's build made, as the build saw it.

setup.py's ``build_ext`` writes a record beside this file (``record_name()``:
tagged as the compiled modules beside it are, since builds for several
Pythons share a tree as their modules do; generated, never committed): the
generated packages built, those left out with the reason (an optional
library's header not found, and every place looked) and how to get them, the
CUDA headers each module was compiled against, and each library's loader
arguments as its C layer passes them.

Two readers: each generated package's ``__init__`` imports its compiled
Python layer through ``layer()``, so that a package the build left out
raises an ``ImportError`` that says so, why and what to install (not Python's
"partially initialized module" of a plain ``from nvml import _nvml``), and
``cubind.show_config()`` reports the record. Importing this module costs
nothing more than ``importlib``: the record is read only when asked for.
"""

import importlib
import os

__all__ = ["NotBuiltError", "layer", "record", "record_name", "record_path"]

# The ways to build cubind (docs/building.md): in place from a clone, or installed.
REBUILD = "scripts/run-example.sh or `python setup.py build_ext --inplace` in a clone, or `pip install .`"


class NotBuiltError(ImportError):
    """A generated package whose compiled modules the build did not make."""


def record_name():
    """The record's file name for this interpreter: ``built.cpython-311-x86_64-linux-gnu.json``
    beside ``loader.cpython-311-x86_64-linux-gnu.so``."""
    import sysconfig

    return "built" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so").removesuffix(".so") + ".json"


def record_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), record_name())


def record():
    """The build's record (see the module's docstring), or None where there is
    none: a tree not built for this Python, or built before records were kept."""
    import json

    try:
        with open(record_path(), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def layer(package, module):
    """``package.module`` (a generated package's compiled Python layer),
    imported; where it is missing, a NotBuiltError saying why."""
    name = f"{package}.{module}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # Only a module of this package missing is "not built": anything else
        # (a module it imports) is the error it is.
        if not (exc.name or "").startswith(package + "."):
            raise
        raise NotBuiltError(not_built_message(package, exc.name), name=exc.name) from None


def not_built_message(package, missing):
    """Why ``package`` cannot be imported, from the build's record."""
    built = record()
    skipped = (built or {}).get("skipped", {}).get(package)
    if skipped:
        return (f"{package} was not built: when cubind was built, {', '.join(skipped['missing'])} "
                f"could not be found, so the build left {package} out (an optional library).\n"
                f"The build's search:{_indented(skipped['searched'])}\n"
                f"To get it: {skipped['hint'] or 'install the library and its headers'} into the Python "
                f"environment that builds cubind, then build cubind again ({REBUILD}).")
    if built is None:
        return (f"{package} is not built: its compiled module {missing} is missing and no build of cubind "
                f"for this Python left a record ({record_path()}). Build cubind ({REBUILD}).")
    return (f"{package} is not importable: its compiled module {missing} is missing, although the last build "
            f"for this Python made it ({record_path()}). Build cubind again ({REBUILD}).")


def _indented(text):
    return "".join("\n    " + line for line in text.splitlines())
