"""One registry class for every "name -> thing" table of HTEB: task evaluators, error detectors,
engines, stores, prompt sets, models, source datasets, ...

Why one class: every lookup by a user-given name must fail the same way (one line, the closest
known name as a hint, every known name listed), and no registry may be filled as a side effect
of importing some module first. Entries come either from a literal given to the constructor or
from decorator registration in the `modules` the registry names; those modules are imported
the first time the registry is asked, never before.

>>> colours = Registry("colour", entries={"red": "#f00", "green": "#0f0"})
>>> colours.get("red")
'#f00'
>>> colours.get("gren")
Traceback (most recent call last):
...
hteb_contract.errors.HtebError: unknown colour 'gren' (did you mean 'green'?); known: red, green
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Generic, TypeVar

from hteb_contract.errors import unknown_name

T = TypeVar("T")


class RegistryError(ValueError):
    """A programming error in a registration (a name claimed twice): not a user error."""


class Registry(Generic[T]):
    """Names -> objects, filled when first asked.

    `entries`: name -> object given up front. `modules`: modules whose `@registry.register(...)`
    decorators add entries; imported on the first lookup. `packages`: packages every module of which is
    imported then (a new module dropped into one registers itself; no list to extend). `aliases`
    registered with an entry resolve to it but are not listed among the known names.
    """

    def __init__(
        self,
        kind: str,
        *,
        entries: Mapping[str, T] | None = None,
        modules: Iterable[str] = (),
        packages: Iterable[str] = (),
    ) -> None:
        self.kind = kind
        self._modules = tuple(modules)
        self._packages = tuple(packages)
        self._loaded = not (self._modules or self._packages)
        self._entries: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        for name, obj in (entries or {}).items():
            self.add(name, obj)

    def add(self, name: str, obj: T, *aliases: str) -> T:
        """Register `obj` under `name` (and `aliases`); a name or alias taken twice is refused."""
        for key in (name, *aliases):
            if key in self._entries or key in self._aliases:
                raise RegistryError(f"{self.kind} {key!r} is registered twice")
        self._entries[name] = obj
        self._aliases.update({alias: name for alias in aliases if alias != name})
        return obj

    def register(self, name: str, *aliases: str) -> Callable[[T], T]:
        """Decorator form of `add`: `@EVALUATORS.register("STS", "STR")`."""

        def wrap(obj: T) -> T:
            return self.add(name, obj, *aliases)

        return wrap

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True  # before importing: a provider may look itself up while loading
            for module in self._modules:
                importlib.import_module(module)
            for name in self._packages:
                package = importlib.import_module(name)
                for found in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
                    importlib.import_module(f"{name}.{found.name}")

    def canonical(self, name: str) -> str:
        """The registered name for `name` or one of its aliases; an unknown name is a one-line error."""
        self._load()
        if name in self._entries:
            return name
        if name in self._aliases:
            return self._aliases[name]
        raise unknown_name(self.kind, name, self._entries, also_matches=self._aliases)

    def get(self, name: str) -> T:
        return self._entries[self.canonical(name)]

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._entries or name in self._aliases

    def names(self) -> list[str]:
        """Registered names in registration order (aliases left out)."""
        self._load()
        return list(self._entries)

    def items(self) -> list[tuple[str, T]]:
        self._load()
        return list(self._entries.items())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._load()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self)} entries)"
