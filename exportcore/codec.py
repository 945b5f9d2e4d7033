"""One JSON codec for dataclass trees: encode to JSON builtins, decode with validation taken from the types.

Outcomes and records cross pytest-xdist workers and CI shards as JSON, and a loaded report
is rendered and gated, so a wrong document must be refused before anything reads it, with
the path of the field at fault (``records[3].outcome.failure.stage must be str, got int``).
The dataclasses' type hints are the schema: a new field is validated the day it is added,
with no name -> type table to keep in step. Two facts the types cannot say go in the field's
metadata: :func:`one_of` (a closed set of values, exportcore.vocab's; enforced on encode and on decode)
and :func:`version` (a schema stamp that a document must carry and that is checked before anything
else in it).

Supported hints: str, int, float (an int is accepted and widened), bool, Any, ``X | None``,
``list[X]``, ``set[X]`` and ``tuple[X, ...]`` (JSON lists; a set field is written sorted), ``dict[str, X]``
and nested dataclasses. Pure Python: imports neither torch nor pytest.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, Callable, Iterable, Mapping, TypeVar

__all__ = ["SchemaError", "checked", "decode", "encode", "encodable", "one_of", "upgrade", "version"]

T = TypeVar("T")


class SchemaError(ValueError):
    """A document does not match its dataclass; the message starts with the path of the field at fault."""


def one_of(choices: Iterable[Any]) -> Mapping[str, Any]:
    """Return field metadata restricting a field to ``choices``."""
    return {"choices": tuple(choices)}


def upgrade(older: Callable[[Any], Any]) -> Mapping[str, Any]:
    """Return field metadata for a field whose JSON shape changed: ``older`` turns what an earlier
    writer wrote there into the current shape before it is decoded (reports and baselines written by
    the previous version keep loading), and must return current data unchanged."""
    return {"upgrade": older}


def version(number: int) -> Mapping[str, Any]:
    """Return field metadata marking a schema stamp: required in a document, equal to ``number``, checked first."""
    return {"version": number}


def encodable(text: str) -> str:
    """Return ``text`` with what UTF-8 cannot encode (lone surrogates) written as ``\\udcxx`` escapes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def encode(value: Any, where: str = "value") -> Any:
    """Return ``value`` (a dataclass tree) as JSON builtins: dicts, lists, str, int, float, bool, None.

    Every string comes out encodable (:func:`encodable`): an exception message holding a lone
    surrogate (``os.fsdecode`` of non-UTF-8 bytes) would break every report writer and xdist's
    transport, so text is cleaned here, in the one encoder, and nowhere else.
    Subclasses of str/int/float are narrowed to the builtin: execnet (xdist) refuses e.g. torch's
    ``TorchVersion(str)``. Anything else is a TypeError naming its path. A field's :func:`one_of`
    holds here as on decode (a SchemaError naming its path): a writer that spells a stage or a
    verdict outside the vocabulary fails where it writes, not in whoever reads the file later.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        sets = _set_fields(type(value))
        for f in dataclasses.fields(value):
            item, path = getattr(value, f.name), f"{where}.{f.name}"
            _check_choice(f, item, path)
            if f.name in sets and isinstance(item, (set, frozenset)):
                item = sorted(item)  # only where the type says set: a set elsewhere is no JSON data
            out[f.name] = encode(item, path)
        return out
    if isinstance(value, dict):
        return {encodable(str(k)): encode(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return encodable(str(value))
    for kind in (int, float):
        if isinstance(value, kind):
            return kind(value)
    raise TypeError(f"{where}: {type(value).__name__} is not JSON data")


def decode(cls: type[T], data: Any, where: str) -> T:
    """Return the ``cls`` instance ``data`` describes; raise SchemaError naming the field path (``where`` first;
    ``""`` names a document's fields bare: ``records[3].verdict``)."""
    return _object(cls, data, where)


def checked(value: T, where: str = "value") -> T:
    """Return a new copy of the dataclass tree ``value``: what ``decode(type(value), encode(value, where), where)``
    returns, in one walk with no JSON in between.

    Validated from the types as a loaded document is (SchemaError or TypeError naming the path), every
    text encodable and every builtin subclass narrowed as the encoder leaves them, tuples made lists, and
    sharing no list, dict or dataclass with ``value``: the caller may go on changing what it passed.
    """
    return _object(type(value), value, where, typed=True)


@functools.cache
def _schema(cls: type) -> tuple[tuple[dataclasses.Field[Any], ...], dict[str, Any]]:
    # Version stamps first: a document of another version fails on that, not on a field it renamed.
    fields = sorted(dataclasses.fields(cls), key=lambda f: "version" not in f.metadata)
    return tuple(fields), typing.get_type_hints(cls)


@functools.cache
def _set_fields(cls: type) -> frozenset[str]:
    hints = _schema(cls)[1]
    return frozenset(f.name for f in dataclasses.fields(cls)
                      if set in (typing.get_origin(h) for h in (hints[f.name], *typing.get_args(hints[f.name]))))


def _required(f: dataclasses.Field[Any]) -> bool:
    no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    return no_default or "version" in f.metadata


def _object(cls: type, data: Any, where: str, typed: bool = False) -> Any:
    # ``typed``: ``data`` comes from Python (checked()), not from JSON: a dataclass stands for its fields.
    if typed and dataclasses.is_dataclass(data) and not isinstance(data, type):
        data = {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}
    if not isinstance(data, dict):
        raise SchemaError(f"{where or 'the document'} must be an object, got {_kind(data)}")
    fields, hints = _schema(cls)
    for f in fields:
        if "version" in f.metadata and data.get(f.name) != f.metadata["version"]:
            raise SchemaError(f"{_at(where)}{f.name} {data.get(f.name)!r} is not supported "
                              f"(expected {f.metadata['version']})")
    names = {f.name for f in fields}
    unknown = [k for k in data if k not in names]
    if unknown:
        raise SchemaError(f"{_at(where)}unknown field(s) {unknown}")
    missing = [f.name for f in fields if f.name not in data and _required(f)]
    if missing:
        raise SchemaError(f"{_at(where)}missing field(s) {missing}")
    kwargs: dict[str, Any] = {}
    for f in fields:
        if f.name not in data:
            continue
        path = f"{where}.{f.name}" if where else f.name  # "": a document's own fields
        raw = data[f.name]
        if typed:
            _check_choice(f, raw, path)  # before its type, as the encoder checks it
        if "upgrade" in f.metadata:
            raw = f.metadata["upgrade"](raw)
        value = _value(hints[f.name], raw, path, typed=typed)
        _check_choice(f, value, path)
        kwargs[f.name] = value
    return cls(**kwargs)


def _value(hint: Any, value: Any, where: str, nullable: bool = False, typed: bool = False) -> Any:
    origin = typing.get_origin(hint)
    if hint is Any:
        return encode(value, where) if typed else value
    if origin is typing.Union or origin is types.UnionType:
        args = typing.get_args(hint)
        rest = [a for a in args if a is not type(None)]
        if value is None and len(rest) < len(args):
            return None
        if len(rest) != 1:
            raise TypeError(f"{where}: the codec supports only X | None unions, not {hint}")
        return _value(rest[0], value, where, nullable=len(rest) < len(args), typed=typed)
    if typed:
        value = _as_encoded(sorted(value) if origin is set and isinstance(value, (set, frozenset)) else value, where)
    if origin in (list, set, tuple):
        item = (typing.get_args(hint) or (Any,))[0]  # list[X], set[X], tuple[X, ...]
        if not isinstance(value, list):
            raise SchemaError(f"{where} must be a list{_or_null(nullable)}, got {_kind(value)}")
        items = [_value(item, v, f"{where}[{i}]", typed=typed) for i, v in enumerate(value)]
        return items if origin is list else origin(items)
    if origin is dict:
        key, item = typing.get_args(hint) or (str, Any)
        if not isinstance(value, dict):
            raise SchemaError(f"{where} must be an object{_or_null(nullable)}, got {_kind(value)}")
        for k in value:
            if not isinstance(k, str):
                raise SchemaError(f"{where} must have str keys, got {_kind(k)}")
        return {k: _value(item, v, f"{where}[{k!r}]", typed=typed) for k, v in value.items()}
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict) and nullable and not (typed and _is_instance(value)):
            raise SchemaError(f"{where} must be an object or null, got {_kind(value)}")
        return _object(hint, value, where, typed)
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)  # JSON writes 1.0 as 1 in some producers; the type says float
    if hint in (str, int, bool, float):
        # bool is an int subclass: True is no count.
        if isinstance(value, hint) and (hint is bool or not isinstance(value, bool)):
            return value
        raise SchemaError(f"{where} must be {hint.__name__}{_or_null(nullable)}, got {_kind(value)}")
    raise TypeError(f"{where}: the codec does not support the type {hint!r}")


def _as_encoded(value: Any, where: str) -> Any:
    # One level of what encode() does to a value (its parts are walked by the caller): text encodable,
    # builtin subclasses narrowed, a tuple a list, a dict's keys encodable text; what JSON cannot hold refused.
    if value is None or isinstance(value, bool) or isinstance(value, list) or _is_instance(value):
        return value
    if isinstance(value, str):
        return encodable(str(value))
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, dict):
        return {encodable(str(k)): v for k, v in value.items()}
    for kind in (int, float):
        if isinstance(value, kind):
            return kind(value)
    raise TypeError(f"{where}: {type(value).__name__} is not JSON data")


def _is_instance(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _check_choice(f: dataclasses.Field[Any], value: Any, where: str) -> None:
    choices = f.metadata.get("choices")
    if choices is not None and value not in choices:
        raise SchemaError(f"{where} must be one of {choices}, got {value!r}")


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def _or_null(nullable: bool) -> str:
    return " or null" if nullable else ""


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
