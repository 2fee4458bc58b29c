"""The public API is typed: the package ships `py.typed`, and every public function and layer constructor annotates
each of its parameters and its result with types that resolve (what a type checker or an IDE reads)."""

from __future__ import annotations

import inspect
import typing
from pathlib import Path

import pytest

import jax_deepgemm as dg
from jax_deepgemm import nn


def _public_functions():
    for module in (dg, nn):
        for name in module.__all__:
            value = getattr(module, name)
            # (fp8_dots_saveable is JAX's own policy object; CHECKPOINT_NAMES a tuple)
            if inspect.isfunction(value) and value.__module__.startswith("jax_deepgemm"):
                yield f"{module.__name__}.{name}", value


def _layer_methods():
    for framework in ("flax", "equinox"):
        try:
            layers = __import__(f"jax_deepgemm.nn.{framework}", fromlist=["FP8Linear", "FP8MoE"])
        except ImportError:
            continue
        for cls in (layers.FP8Linear, layers.FP8MoE):
            for method in ("__init__", "__call__"):
                yield f"nn.{framework}.{cls.__name__}.{method}", getattr(cls, method)


def _unannotated(fn) -> list[str]:
    sig = inspect.signature(fn)
    missing = [p.name for p in sig.parameters.values() if p.name != "self" and p.annotation is inspect.Parameter.empty]
    if fn.__name__ != "__init__" and sig.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def test_py_typed_ships_with_the_package():
    assert (Path(dg.__file__).parent / "py.typed").is_file()


@pytest.mark.parametrize("name, fn", [pytest.param(name, fn, id=name)
                                      for name, fn in [*_public_functions(), *_layer_methods()]])
def test_public_signatures_are_annotated(name, fn):
    assert not _unannotated(fn), f"{name} has no annotation for {_unannotated(fn)}"
    hints = typing.get_type_hints(fn)  # every annotation names something importable
    assert set(hints) >= {p for p in inspect.signature(fn).parameters if p != "self"}


def test_the_checks_see_a_missing_annotation():
    def half(x: int, y) -> int:
        return x

    def no_result(x: int):
        return x

    assert _unannotated(half) == ["y"] and _unannotated(no_result) == ["return"]
