"""Typed records on the parent side, one frozen dataclass per kind of ``child.schema``.

The classes are built from the schema, so a field exists in one place only; reading
converts nested values (encoded tensors, losses, ...) to their classes too, and a
record whose fields do not match the schema is refused (``RecordError``) instead of
surfacing later as a KeyError deep in a comparison.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Optional

from .child import schema

_SCALARS: dict[str, type] = {"int": int, "float": float, "str": str, "bool": bool, "any": object}
_CONTAINER = re.compile(r"(list|map)\[(.+)\]$")


class RecordError(ValueError):
    """A record that does not follow the schema (a child of another version, or a bug)."""


class _Record:
    """Base of every generated class: ``to_dict`` gives the plain form back (for JSON)."""

    KIND = ""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class _TensorMethods(_Record):
    """Methods of the ``tensor`` value kind (an encoded tensor)."""

    @property
    def is_fingerprint(self) -> bool:
        return self.data is None

    @property
    def elements(self):
        """The recorded elements: all of them, or the fingerprint's sample."""
        return self.sample if self.is_fingerprint else self.data

    @property
    def numel(self) -> int:
        n = 1
        for size in self.shape:
            n *= size
        return n


_METHODS: dict[str, type] = {"tensor": _TensorMethods}
_CLASS_NAMES = {"tensor": "EncodedTensor", "exception": "ExceptionRecord", "warning": "WarningRecord",
               "param_grad": "ParamGrad"}  # clearer than the builtins' names
_CLASSES: dict[str, type] = {}


def _class_name(kind: str) -> str:
    return _CLASS_NAMES.get(kind, kind.capitalize())


def _converter(type_name: str) -> Callable[[Any], Any]:
    """How to turn a plain value of the schema type ``type_name`` into its typed form."""
    optional = type_name.endswith("?")
    base = type_name[:-1] if optional else type_name
    container = _CONTAINER.match(base)
    if container:
        inner = _converter(container.group(2))
        if container.group(1) == "list":
            convert = lambda value: [inner(v) for v in value]
        else:
            convert = lambda value: {str(k): inner(v) for k, v in value.items()}
    elif base in _SCALARS:
        convert = lambda value: value
    else:
        convert = lambda value: _CLASSES[base].from_dict(value)
    return (lambda value: None if value is None else convert(value)) if optional else convert


def _python_type(type_name: str) -> object:
    optional = type_name.endswith("?")
    base = type_name[:-1] if optional else type_name
    container = _CONTAINER.match(base)
    if container:
        inner = _python_type(container.group(2))
        python = list[inner] if container.group(1) == "list" else dict[str, inner]
    else:
        python = _SCALARS.get(base) or _class_name(base)
    return Optional[python] if optional else python


def _build(kind: str, fields: tuple) -> type:
    converters = {name: _converter(type_name) for name, type_name, _ in fields}

    @classmethod
    def from_dict(cls, raw: dict):
        given = set(raw) - {"kind"}
        if given != set(converters):
            missing, unknown = sorted(set(converters) - given), sorted(given - set(converters))
            raise RecordError(f"{kind} record: missing {missing}, unknown {unknown}")
        try:
            return cls(**{name: convert(raw[name]) for name, convert in converters.items()})
        except (AttributeError, TypeError, KeyError) as exc:
            raise RecordError(f"{kind} record: {exc}") from None

    doc = "; ".join(f"``{name}``: {text}" for name, _, text in fields)
    cls = dataclasses.make_dataclass(
        _class_name(kind), [(name, _python_type(type_name)) for name, type_name, _ in fields],
        bases=(_METHODS.get(kind, _Record),), frozen=True,
        namespace={"KIND": kind, "from_dict": from_dict, "__doc__": f"``{kind}``: {doc}",
                   "__module__": __name__})
    _CLASSES[kind] = cls
    return cls


for _kind, _fields in {**schema.VALUES, **schema.KINDS}.items():
    _build(_kind, _fields)

EncodedTensor = _CLASSES["tensor"]
Loss = _CLASSES["loss"]
Header = _CLASSES["header"]
Step = _CLASSES["step"]
Memory = _CLASSES["memory"]
ExceptionRecord = _CLASSES["exception"]
End = _CLASSES["end"]
Output = _CLASSES["output"]
Entry = _CLASSES["entry"]
Forward = _CLASSES["forward"]
Scalar = _CLASSES["scalar"]
Log = _CLASSES["log"]
Artifact = _CLASSES["artifact"]
WarningRecord = _CLASSES["warning"]
Layer = _CLASSES["layer"]
ParamGrad = _CLASSES["param_grad"]
Hint = _CLASSES["hint"]


def parse(raw: dict) -> _Record:
    """The typed record for one dict read from the stream."""
    try:
        cls = _CLASSES[raw["kind"]]
    except (KeyError, TypeError):
        raise RecordError(f"not a record of a known kind: {str(raw)[:80]}") from None
    if raw["kind"] in schema.VALUES:
        raise RecordError(f"{raw['kind']} is a nested value, not a record")
    return cls.from_dict(raw)
