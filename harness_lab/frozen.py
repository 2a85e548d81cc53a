"""A faster ``__init__`` for the frozen dataclasses a run creates by the hundred.

A frozen dataclass's generated ``__init__`` sets each field through
``object.__setattr__`` looked up afresh per field; a run creates some hundred such values
(trace events, invocation records, requests and replies), and those lookups were a sixth
of a sweep's time. :func:`quick_init` swaps in an ``__init__`` with the same signature,
defaults, default factories and ``__post_init__`` call that writes each slot straight
through its member descriptor, about three times faster. The class stays frozen: assigning
to a field afterwards still raises :class:`dataclasses.FrozenInstanceError`.

The frozen value classes of the run core are prepared by :func:`value_class`, in either core:
the pure-Python one gets this faster ``__init__``, and both are pickled (and deep-copied) by
constructor, which a class compiled by mypyc needs.
"""

from __future__ import annotations

import copyreg
import dataclasses
from typing import Any, TypeVar

__all__ = ["quick_init", "reduce_by_fields", "value_class"]

C = TypeVar("C", bound=type)

_FACTORY = object()  # stands for "not given" where a field has a default factory


def quick_init(cls: C) -> C:
    """Give the frozen dataclass ``cls`` a faster ``__init__`` of the same behaviour.

    A class compiled by mypyc is returned as it is. The frozen value classes of the compiled
    run core are declared ``@dataclass(frozen=True, slots=True, init=False)`` with an
    ``__init__`` that sets each field with ``object.__setattr__`` (which mypyc turns into a
    native store, some twenty times faster than a frozen dataclass's generated ``__init__``),
    and are followed by ``value_class(Cls)``, which calls this, rather than decorated: mypyc
    leaves a class with an unknown decorator interpreted. In the pure-Python core, this call
    replaces that ``__init__`` with the faster one built here, of the same signature: where a
    written ``__init__`` takes ``None`` for a field with a default factory (a compiled
    ``__init__`` cannot hold a mutable default), so does the replacement.
    """
    if "__mypyc_attrs__" in cls.__dict__:
        return cls
    if not dataclasses.is_dataclass(cls) or not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__qualname__} is not a frozen dataclass")
    if any(f._field_type is dataclasses._FIELD_INITVAR  # type: ignore[attr-defined]
           for f in cls.__dataclass_fields__.values()):  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__qualname__} has an InitVar, which quick_init does not take")
    # a written __init__ (init=False) takes None where a default factory's value is wanted
    not_given = "_FACTORY" if cls.__dataclass_params__.init else "None"  # type: ignore[attr-defined]
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY, "_set": object.__setattr__}
    params: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for f in dataclasses.fields(cls):
        slot = cls.__dict__.get(f.name)
        setter = f"_s_{f.name}"
        if slot is not None and hasattr(slot, "__set__") and hasattr(slot, "__delete__"):
            namespace[setter] = slot.__set__  # the slot's own member descriptor
            write = f"{setter}(self, {{}})"
        else:
            write = f"_set(self, {f.name!r}, {{}})"
        has_factory = f.default_factory is not dataclasses.MISSING
        if has_factory:
            namespace[f"_f_{f.name}"] = f.default_factory
        if f.default is not dataclasses.MISSING:
            namespace[f"_d_{f.name}"] = f.default
        if not f.init:  # set from its default alone
            value = f"_f_{f.name}()" if has_factory else f"_d_{f.name}"
            body.append(write.format(value))
            continue
        if has_factory:
            param = f"{f.name}={not_given}"
            value = f"_f_{f.name}() if {f.name} is {not_given} else {f.name}"
        elif f.default is not dataclasses.MISSING:
            param, value = f"{f.name}=_d_{f.name}", f.name
        else:
            param, value = f.name, f.name
        (keyword if f.kw_only else params).append(param)
        body.append(write.format(value))
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    signature = ", ".join(["self", *params, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({signature}):\n" + "".join(f"    {line}\n" for line in body or ["pass"])
    exec(source, namespace)  # noqa: S102 - the source is built from the class's own fields
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__dict__["__init__"].__doc__
    init.__annotations__ = {**{f.name: f.type for f in dataclasses.fields(cls) if f.init},
                            "return": None}
    cls.__init__ = init  # type: ignore[misc]
    return cls


def reduce_by_fields(value: Any) -> tuple[type, tuple[Any, ...]]:
    """A ``__reduce__`` result rebuilding the frozen dataclass ``value`` by its constructor.

    Pickle's default path sets attributes one by one, which a frozen class compiled by mypyc
    refuses; rebuilding by the fields, in the constructor's order, works in both cores.
    """
    return type(value), tuple(getattr(value, f.name) for f in dataclasses.fields(value))


def value_class(cls: C) -> C:
    """Ready the frozen value class ``cls`` of the run core for the core this process runs.

    Call it after the class (``value_class(Cls)``), not as a decorator: mypyc leaves a class
    with an unknown decorator interpreted. Pure Python: :func:`quick_init`'s faster
    ``__init__``. Both cores: pickled and deep-copied by constructor (:func:`reduce_by_fields`
    registered with :mod:`copyreg`, which pickle, copy, loky and dask all consult), since
    pickle's default path sets attributes one by one and a compiled frozen class refuses it.
    """
    copyreg.pickle(cls, reduce_by_fields)
    return quick_init(cls)
