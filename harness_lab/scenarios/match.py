"""The matching language of scenario expectations: one pattern, one observed value.

A pattern is plain YAML data, read by four rules and a set of operators
(``docs/scenarios.md``, "Matching"):

* a scalar equals the observed value (``true`` never equals ``1``); the string ``$any``
  matches any value that is there;
* a list matches a list of the same length, item by item;
* a mapping matches a mapping that has every key it names, each value matching; keys it
  does not name are not compared (a subset);
* in a list of events or records, a string item stands for the item's key field (the
  ``kind`` of an SSE event, the ``type`` of a trace event): ``RELEASE_DECISION`` is
  ``{type: RELEASE_DECISION}``.

Keys starting with ``$`` are operators (observed data never has such keys):
``$equals`` (exactly this value: no subset, no shorthand), ``$in_order`` (these items occur
in this order, others may come between), ``$adjacent`` (these items occur one right after
another), ``$any_order`` (exactly these items, in any order), ``$contains`` (each of these
matches its own item, in any order, others may be there), ``$count`` (how many items, in all
or matching each pattern), ``$absent`` (no item matches any of these; in a mapping, none of
these keys is present) and ``$where`` (relations between values under the matched one,
:mod:`harness_lab.scenarios.relations`). Operators combine with each other and, in a
mapping, with keys.

Every mismatch names its path: ``trace[RELEASE_DECISION].detail.outcome: expected FALLBACK,
got SUCCESS``. An item of a keyed list is named by its key value (``#2`` for its second
occurrence when the value repeats), any other item by its index.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness_lab.scenarios.relations import Relation, parse_relation

__all__ = ["ANY", "LIST_OPERATORS", "OPERATORS", "Mismatch", "check_pattern", "count_rules",
           "match", "plain", "render", "same"]

OPERATORS = ("$equals", "$in_order", "$adjacent", "$any_order", "$contains", "$count",
             "$absent", "$where")
"""The operator keys of a mapping pattern."""

LIST_OPERATORS = ("$in_order", "$adjacent", "$any_order", "$contains", "$absent")
"""The operators that take a list of item patterns."""

ANY = "$any"
"""The pattern matching any value that is there."""

_VALUE_WORD = re.compile(r"\$[A-Za-z_]+")


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One expectation that did not hold: where, what was expected, what was observed.

    ``detail`` carries a longer explanation shown under the one-line message (a snapshot's
    unified diff)."""

    field: str
    expected: Any
    observed: Any
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.field}: expected {render(self.expected)}, got {render(self.observed)}"


class Shown(str):
    """Text shown as it is in a mismatch (not quoted like an observed string)."""

    __slots__ = ()


def check_pattern(pattern: Any, where: str = "") -> Any:
    """``pattern`` when its operators are well formed; else ValueError naming the place.

    An unknown ``$`` key, a list operator given anything but a list, ``$absent`` in a
    mapping given anything but key names: each is refused when the file loads, not when a
    run happens not to reach it."""
    if isinstance(pattern, Mapping):
        for key, value in pattern.items():
            here = f"{where}.{key}" if where else str(key)
            if isinstance(key, str) and key.startswith("$"):
                if key not in OPERATORS:
                    from harness_lab.scenarios.suggest import did_you_mean

                    raise ValueError(f"{here}: unknown operator {key!r}; the operators are "
                                     f"{', '.join(OPERATORS)}"
                                     f"{did_you_mean(key, list(OPERATORS))}")
                if key in LIST_OPERATORS and not isinstance(value, list):
                    raise ValueError(f"{here}: {key} takes a list, got {render(value)}")
                if key == "$equals":
                    continue  # literal data
                if key == "$where":
                    _relations(value, here)
                    continue
                if key == "$count":
                    for item, _, _ in count_rules(value, here):
                        check_pattern(item, here)
                    continue
            check_pattern(value, here)
    elif isinstance(pattern, list):
        for i, item in enumerate(pattern):
            check_pattern(item, f"{where}.{i}" if where else str(i))
    elif isinstance(pattern, str) and _VALUE_WORD.fullmatch(pattern) and pattern != ANY:
        from harness_lab.scenarios.suggest import did_you_mean

        raise ValueError(f"{where or 'pattern'}: unknown value {pattern!r}; {ANY} matches any "
                         f"value{did_you_mean(pattern, [ANY])} (for the literal text, write "
                         f"{{$equals: {pattern!r}}})")
    return pattern


_COUNT_FORMS = ("a number of items (`$count: 3`), a mapping of item to number "
                "(`$count: {TOOL_PROGRESS: 3}`) or a list of {of: PATTERN, n: NUMBER}")
_COUNT_TEST = re.compile(r"\s*(<=|>=|==|!=|<|>)?\s*(\d+)\s*")


def count_rules(value: Any, where: str = "$count") -> list[tuple[Any, str, int]]:
    """The rules of a ``$count`` value, each (item pattern or ``None`` for every item,
    comparison, number); ValueError naming the place when it is malformed. A number may be
    written with a comparison: ``">= 2"``."""
    def number(n: Any, here: str) -> tuple[str, int]:
        if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
            return "==", n
        m = _COUNT_TEST.fullmatch(n) if isinstance(n, str) else None
        if m is None:
            raise ValueError(f"{here}: a count is a number or a comparison like '>= 2', "
                             f"got {render(n)}")
        return m.group(1) or "==", int(m.group(2))

    if isinstance(value, int | str) and not isinstance(value, bool):
        return [(None, *number(value, where))]
    if isinstance(value, Mapping):
        return [(item, *number(n, f"{where}.{item}")) for item, n in value.items()]
    if isinstance(value, list):
        out = []
        for i, rule in enumerate(value):
            if not isinstance(rule, Mapping) or set(rule) != {"of", "n"}:
                raise ValueError(f"{where}.{i}: each rule of a $count list is {{of: PATTERN, "
                                 f"n: NUMBER}}, got {render(rule)}")
            out.append((rule["of"], *number(rule["n"], f"{where}.{i}.n")))
        return out
    raise ValueError(f"{where}: $count takes {_COUNT_FORMS}; got {render(value)}")


def _relations(value: Any, where: str) -> list[Relation]:
    """The relations of a ``$where`` value (one text or a list of them)."""
    texts = value if isinstance(value, list) else [value]
    out = []
    for i, text in enumerate(texts):
        try:
            out.append(parse_relation(text, absolute=False))
        except ValueError as exc:
            here = f"{where}.{i}" if isinstance(value, list) else where
            raise ValueError(f"{here}: {exc}") from None
    return out


def match(pattern: Any, observed: Any, path: str, key: str | None = None) -> list[Mismatch]:
    """Every mismatch between ``pattern`` and ``observed`` (empty when it matches).

    ``path`` names ``observed`` in messages; ``key`` is the key field of ``observed`` when it
    is a list of mappings (string items of the pattern stand for it)."""
    return _Matcher(key).match(pattern, observed, path)


class _Matcher:
    __slots__ = ("key",)

    def __init__(self, key: str | None) -> None:
        self.key = key

    def match(self, pattern: Any, observed: Any, path: str, top: bool | None = True
              ) -> list[Mismatch]:
        """``top``: True when ``observed`` is the keyed list itself, False for one of its
        items (a string pattern is shorthand for its key field), None deeper down."""
        if type(pattern) is str and pattern == ANY:
            return []
        if isinstance(pattern, Mapping):
            return self._mapping(pattern, observed, path, top)
        if isinstance(pattern, list):
            if not isinstance(observed, list):
                return [Mismatch(path, pattern, _shown_kind(observed))]
            return self._sequence(pattern, observed, path, top)
        if top is False and self.key is not None and isinstance(observed, Mapping):
            got = observed.get(self.key)  # shorthand: a string item names the key field
            return [] if same(pattern, got) else [Mismatch(path, pattern, got)]
        return [] if same(pattern, observed) else [Mismatch(path, pattern, observed)]

    # -- mappings --------------------------------------------------------------------------

    def _mapping(self, pattern: Mapping[str, Any], observed: Any, path: str, top: bool | None
                 ) -> list[Mismatch]:
        out: list[Mismatch] = []
        keys = {k: v for k, v in pattern.items() if not str(k).startswith("$")}
        if "$equals" in pattern and not same(plain(pattern["$equals"]), observed):
            out.append(Mismatch(path, pattern["$equals"], observed))
        if "$where" in pattern:
            out += _where(pattern["$where"], observed, path)
        if isinstance(observed, list):
            if keys:
                return [Mismatch(path, Shown("a mapping"), _shown_kind(observed))]
            items = self._labels(observed, top)
            if "$in_order" in pattern:
                out += self._in_order(pattern["$in_order"], observed, path, items, top)
            if "$adjacent" in pattern:
                out += self._adjacent(pattern["$adjacent"], observed, path, items, top)
            if "$any_order" in pattern:
                out += self._unordered(pattern["$any_order"], observed, path, items, top,
                                       every=True)
            if "$contains" in pattern:
                out += self._unordered(pattern["$contains"], observed, path, items, top,
                                       every=False)
            if "$count" in pattern:
                out += self._count(pattern["$count"], observed, path, items, top)
            if "$absent" in pattern:
                out += self._absent_items(pattern["$absent"], observed, path, items, top)
            return out
        for op in ("$in_order", "$adjacent", "$any_order", "$contains", "$count"):
            if op in pattern:
                out.append(Mismatch(path, Shown(f"a list ({op})"), _shown_kind(observed)))
        if not isinstance(observed, Mapping):
            if keys or "$absent" in pattern:
                out.append(Mismatch(path, Shown("a mapping"), _shown_kind(observed)))
            return out
        for i, name in enumerate(pattern.get("$absent", ())):
            if not isinstance(name, str):  # a mapping's $absent names keys, nothing else
                out.append(Mismatch(f"{path}.$absent.{i}", Shown("a key name"),
                                    _shown_kind(name)))
            elif name in observed:
                out.append(Mismatch(f"{path}.{name}", Shown("absent"), observed[name]))
        for name, want in keys.items():
            if name not in observed:
                shown = Shown("any value") if type(want) is str and want == ANY else want
                out.append(Mismatch(f"{path}.{name}", shown, Shown("no such key")))
            else:
                out += self.match(want, observed[name], f"{path}.{name}", top=None)
        return out

    # -- lists -----------------------------------------------------------------------------

    def _item(self, pattern: Any, observed: Any, path: str, top: bool | None) -> list[Mismatch]:
        """One item of a list: shorthand applies to the items of the keyed list only."""
        return self.match(pattern, observed, path, top=False if top else None)

    def _labels(self, observed: Sequence[Any], top: bool | None) -> list[str]:
        """The path label of each item: in the keyed list itself, its key value (``#n`` when
        it repeats); else its index."""
        if self.key is None or not top:
            return [str(i) for i in range(len(observed))]
        values = [item.get(self.key) if isinstance(item, Mapping) else None
                  for item in observed]
        counts, seen = Counter(values), Counter[str]()
        labels = []
        for i, v in enumerate(values):
            if not isinstance(v, str):
                labels.append(str(i))
                continue
            seen[v] += 1
            labels.append(v if counts[v] == 1 else f"{v}#{seen[v]}")
        return labels

    def _named(self, pattern: Any) -> Any:
        """The key value a pattern item names (its shorthand, or its key field), if any."""
        if isinstance(pattern, str):
            return pattern
        if isinstance(pattern, Mapping) and self.key is not None:
            return pattern.get(self.key)
        return None

    def _same_key(self, pattern: Any, item: Any) -> bool:
        named = self._named(pattern)
        return (named is not None and isinstance(item, Mapping)
                and same(named, item.get(self.key or "")))

    def _show_item(self, item: Any, pattern: Any) -> Any:
        """An observed item as a mismatch shows it: what the pattern asked about."""
        if isinstance(item, Mapping) and self.key is not None:
            if isinstance(pattern, str):
                return item.get(self.key)
            if isinstance(pattern, Mapping):
                return {k: item[k] for k in pattern if k in item}
        return item

    def _sequence(self, pattern: list[Any], observed: list[Any], path: str, top: bool | None
                  ) -> list[Mismatch]:
        labels = self._labels(observed, top)
        out: list[Mismatch] = []
        for i in range(max(len(pattern), len(observed))):
            if i >= len(observed):
                out.append(Mismatch(f"{path}[{i}]", pattern[i], Shown("end of list")))
                break
            if i >= len(pattern):
                out.append(Mismatch(f"{path}[{i}]", Shown("end of list"),
                                    self._show_item(observed[i], pattern[-1] if pattern
                                                    else None)))
                break
            named = top and self._same_key(pattern[i], observed[i])
            here = f"{path}[{labels[i] if named else i}]"
            found = self._item(pattern[i], observed[i], here, top)
            if found:
                out += found
                break
        if out and len(pattern) != len(observed):
            out.append(Mismatch(path, Shown(f"{len(pattern)} items"),
                                Shown(f"{len(observed)}")))
        return out

    def _in_order(self, patterns: list[Any], observed: list[Any], path: str,
                  labels: list[str], top: bool | None) -> list[Mismatch]:
        pos = 0
        for p in patterns:
            hit = next((i for i in range(pos, len(observed))
                        if not self._item(p, observed[i], "", top)), None)
            if hit is not None:
                pos = hit + 1
                continue
            after = f" after {path}[{labels[pos - 1]}]" if pos else ""
            return self._closest(p, observed, path, labels, top, pos, after)
        return []

    def _closest(self, p: Any, observed: list[Any], path: str, labels: list[str], top: bool | None,
                 pos: int, after: str) -> list[Mismatch]:
        """Why ``p`` matched nothing from ``pos`` on: the nearest item of the same key."""
        same = [i for i in range(pos, len(observed)) if self._same_key(p, observed[i])]
        if not same and self._named(p) is None:
            same = list(range(pos, len(observed)))
        if same and not isinstance(p, str):
            tries = [self._item(p, observed[i], f"{path}[{labels[i]}]", top) for i in same]
            return min(tries, key=len)
        earlier = [i for i in range(pos) if not self._item(p, observed[i], "", top)]
        if earlier:
            return [Mismatch(path, Shown(f"{render(p)}{after}"),
                             Shown(f"only before it, at {path}[{labels[earlier[-1]]}]"))]
        return [Mismatch(path, Shown(f"{render(p)}{after}"), Shown("none"))]

    def _adjacent(self, patterns: list[Any], observed: list[Any], path: str,
                  labels: list[str], top: bool | None) -> list[Mismatch]:
        if not patterns:
            return []
        best: tuple[int, int] | None = None  # (items matched, start)
        for start in range(len(observed)):
            n = 0
            while (n < len(patterns) and start + n < len(observed)
                   and not self._item(patterns[n], observed[start + n], "", top)):
                n += 1
            if n == len(patterns):
                return []
            if n and (best is None or n > best[0]):
                best = (n, start)
        if best is None:
            return self._closest(patterns[0], observed, path, labels, top, 0, "")
        n, start = best
        previous = f"{path}[{labels[start + n - 1]}]"
        at = start + n
        want = Shown(f"{render(patterns[n])} right after {previous}")
        if at >= len(observed):
            return [Mismatch(path, want, Shown("end of list"))]
        if self._same_key(patterns[n], observed[at]):
            return self._item(patterns[n], observed[at], f"{path}[{labels[at]}]", top)
        return [Mismatch(path, want, self._show_item(observed[at], patterns[n]))]

    def _unordered(self, patterns: list[Any], observed: list[Any], path: str,
                   labels: list[str], top: bool | None, every: bool) -> list[Mismatch]:
        """``$any_order`` (``every``: each item matched, each pattern by its own) and
        ``$contains`` (each pattern matches its own item; others may be there)."""
        fits = [[j for j, item in enumerate(observed) if not self._item(p, item, "", top)]
                for p in patterns]
        taken = _assignment(fits)
        out: list[Mismatch] = []
        op = "$any_order" if every else "$contains"
        if every and len(patterns) != len(observed):
            out.append(Mismatch(path, Shown(f"{len(patterns)} items in any order"),
                                Shown(f"{len(observed)}")))
        for i, p in enumerate(patterns):
            if i in taken:
                continue
            if not fits[i]:
                if not isinstance(p, Mapping | list) and (self.key is None or not top):
                    return out + [Mismatch(path, Shown(f"{render(p)} among the items ({op})"),
                                           _shown_kind(observed))]
                return out + self._closest(p, observed, path, labels, top, 0, "")
            others = ", ".join(f"{path}[{labels[j]}]" for j in fits[i])
            return out + [Mismatch(path, Shown(f"{render(p)} ({op}: an item of its own)"),
                                   Shown(f"only {others}, which other patterns take"))]
        if every and not out:
            spare = [j for j in range(len(observed)) if j not in taken.values()]
            if spare:
                j = spare[0]
                out.append(Mismatch(f"{path}[{labels[j]}]", Shown(f"no item ({op})"),
                                    self._show_item(observed[j], None)))
        return out

    def _count(self, value: Any, observed: list[Any], path: str, labels: list[str],
               top: bool | None) -> list[Mismatch]:
        out: list[Mismatch] = []
        for p, op, n in count_rules(value):
            hits = [j for j, item in enumerate(observed)
                    if p is None or not self._item(p, item, "", top)]
            if _COMPARE[op](len(hits), n):
                continue
            want = f"{'' if op == '==' else op + ' '}{n}"
            items = "item" if (op, n) == ("==", 1) else "items"
            what = items if p is None else f"{items} matching {render(p)}"
            where = ", ".join(f"{path}[{labels[j]}]" for j in hits[:4])
            more = ", ..." if len(hits) > 4 else ""
            got = f"{len(hits)}" + (f" ({where}{more})" if hits and p is not None else "")
            out.append(Mismatch(path, Shown(f"{want} {what}"), Shown(got)))
        return out

    def _absent_items(self, patterns: list[Any], observed: list[Any], path: str,
                      labels: list[str], top: bool | None) -> list[Mismatch]:
        return [Mismatch(f"{path}[{labels[i]}]", Shown("absent"),
                         self._show_item(item, p))
                for p in patterns for i, item in enumerate(observed)
                if not self._item(p, item, "", top)]


_COMPARE = {"==": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__,
            ">": int.__gt__, ">=": int.__ge__}


def _assignment(fits: list[list[int]]) -> dict[int, int]:
    """A largest matching of patterns to distinct items (pattern index -> item index),
    ``fits[i]`` listing the items pattern ``i`` matches (augmenting paths)."""
    owner: dict[int, int] = {}  # item -> pattern

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(fits)):
        place(i, set())
    return {i: j for j, i in owner.items()}


def _where(value: Any, observed: Any, path: str) -> list[Mismatch]:
    """A mismatch for each ``$where`` relation that does not hold in ``observed``."""
    out = []
    for relation in _relations(value, "$where"):
        unheld = relation.holds(observed)
        if unheld is not None:
            got = " and ".join(render(v) for v in unheld.values)
            note = f"{got}: {unheld.note}" if got and unheld.note else got or unheld.note
            out.append(Mismatch(path or "value", Shown(str(relation)), Shown(note)))
    return out


def same(want: Any, got: Any) -> bool:
    """Equal, with ``true``/``false`` never equal to ``1``/``0`` at any depth (as YAML and
    JSON read them, unlike Python's ``==``)."""
    if isinstance(want, bool) or isinstance(got, bool):
        return isinstance(want, bool) and isinstance(got, bool) and want is got
    if isinstance(want, Mapping) and isinstance(got, Mapping):
        return (set(want) == set(got)
                and all(same(want[k], got[k]) for k in want))
    if isinstance(want, list | tuple) and isinstance(got, list | tuple):
        return len(want) == len(got) and all(same(a, b) for a, b in zip(want, got, strict=True))
    return bool(want == got)


def plain(value: Any) -> Any:
    """An enum member's value; any other ``value`` as it is."""
    return getattr(value, "value", value)


def _shown_kind(value: Any) -> Shown:
    if isinstance(value, list):
        return Shown(f"a list of {len(value)}: {render(value)}")
    if isinstance(value, Mapping):
        return Shown(f"a mapping: {render(value)}")
    return Shown(render(value))


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/ #]*")
_WORDS = frozenset({"null", "true", "false", "yes", "no", "on", "off", "~"})


def render(value: Any) -> str:
    """``value`` as a mismatch shows it: YAML flow style (strings unquoted when plain)."""
    if isinstance(value, Shown):
        return str(value)
    value = plain(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        bare = (_PLAIN.fullmatch(value) is not None and value.lower() not in _WORDS
                and not value.endswith(" "))
        return value if bare else json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {render(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render(v) for v in value) + "]"
    return str(value)
