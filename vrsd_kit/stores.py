"""What every adapter records about a store it reads vectors from, and what it does
when it cannot (framework-free: no store or framework is imported here).

Each adapter keeps one registry, a tuple of records built with keywords, one
module per store (``vrsd_kit.adapters.ADAPTERS`` says where each adapter's is);
the adapter's record class extends ``StoreRecord`` with how to read the rows and
their vectors. The docs' store table and the store tests are checked against
the registries, so a new store costs its module, its test fixture and one line.

When no record applies to a store, the adapter embeds the candidates' text again
(the fallback). ``check_reembedding`` applies the user's ``reembed`` policy to
that: ``"warn"`` (default: one warning per store class, naming the reason),
``"allow"`` (silent) or ``"refuse"`` (a ValueError; for users paying per
embedded token).
"""

from __future__ import annotations

import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Literal

Reembed = Literal["warn", "allow", "refuse"]
REEMBED_POLICIES: tuple[str, ...] = ("warn", "allow", "refuse")


@dataclass(frozen=True, kw_only=True)
class StoreRecord:
    """One store an adapter reads candidate vectors from.

    Attributes:
        name: the registry key and the store tests' case id (``"chroma"``).
        family: the store table's row (``"Chroma"``); records of several adapters share it.
        module, class_name: where the store class lives. A store is recognised by
            ``isinstance`` against that class, looked up in ``sys.modules`` only, so a
            store package that was never imported is never imported here.
        client: the distribution whose internals the record reads (``"langchain-chroma"``).
        tested: the ``client`` versions its tests ran against, a version specifier
            (``">=1.1,<1.2"``); other versions may work, or fall back if the internals moved.
        vectors: how the vectors are read, one line for the store table.
        limits: when the record does not apply and the adapter re-embeds ("" = never).
        private: the other library's private members it reads (each kept in the one
            store module that uses it).
        filters: the store's filter syntax, as a user writes it ("" = none taken).
        tested_on: what kind of deployment its tests ran against.
    """

    name: str
    family: str
    module: str
    class_name: str
    client: str
    tested: str
    vectors: str
    limits: str = ""
    private: tuple[str, ...] = ()
    filters: str = ""
    tested_on: str = "embedded"

    def store_class(self) -> type | None:
        mod = sys.modules.get(self.module)
        cls = getattr(mod, self.class_name, None) if mod is not None else None
        return cls if isinstance(cls, type) else None

    def is_for(self, store: Any) -> bool:
        """``store`` is an instance of this record's class (its package already imported)."""
        cls = self.store_class()
        return cls is not None and isinstance(store, cls)


@dataclass(frozen=True, kw_only=True)
class PrivateMember:
    """A framework's private member an adapter reads outside its store records (the
    records list theirs in ``StoreRecord.private``), kept in the adapter's one compat
    module (``vrsd_langchain._compat``, ``vrsd_llamaindex._compat``).

    Attributes:
        member: ``"Class.attribute"`` as the framework spells it.
        client: the distribution that defines it (``"llama-index-core"``).
        tested: the ``client`` versions the adapter's tests ran against, a version
            specifier (``"==0.14.25"``); the tests check the member is still there.
        why: what the adapter reads it for, and what it does when it is missing.
    """

    member: str
    client: str
    tested: str
    why: str


def private_members(client: str, tested: str, why: dict[str, str]) -> tuple[PrivateMember, ...]:
    """One ``PrivateMember`` per ``member -> why`` entry, all of ``client`` at ``tested``."""
    return tuple(PrivateMember(member=member, client=client, tested=tested, why=reason)
                 for member, reason in why.items())


def check_reembed(policy: Any, name: str = "reembed") -> Reembed:
    """``policy`` if it is one of ``REEMBED_POLICIES``, else a ValueError naming ``name``."""
    if not isinstance(policy, str) or policy not in REEMBED_POLICIES:
        raise ValueError(
            f"{name}: expected one of {', '.join(map(repr, REEMBED_POLICIES))}, got {policy!r}"
        )
    return policy  # type: ignore[return-value]


_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


def check_reembedding(policy: Reembed, store: str, reason: str, count: int,
                      option: str = "reembed") -> None:
    """Apply ``policy`` before ``count`` candidates of ``store`` are embedded again.

    ``store`` names the store class, ``reason`` says why its vectors could not be read.
    ``"refuse"`` raises a ValueError naming the store, the reason and the option;
    ``"warn"`` warns once per (store class, reason) for the process; ``"allow"`` is silent.
    """
    if count == 0 or policy == "allow":
        return
    if policy == "refuse":  # nothing is embedded: say what would have been
        raise ValueError(
            f"{option}: {store}: {reason}; its {count} candidate text(s) would have to be "
            f"embedded again with the embedding model; {option}='refuse' forbids that (give "
            f"a store whose vectors can be read, or set {option}='allow')")
    with _warned_lock:
        if (store, reason) in _warned:
            return
        _warned.add((store, reason))
    # the embedding follows this warning at once: say what is done, not what might be
    warnings.warn(f"{store}: {reason}, so its {count} candidate text(s) are embedded again "
                  f"with the embedding model (warned once per store class; {option}='allow' "
                  f"silences this, {option}='refuse' forbids it)", ReembeddingWarning,
                  stacklevel=3)


class ReembeddingWarning(UserWarning):
    """Candidates are embedded again because their stored vectors could not be read."""


def forget_warnings() -> None:
    """Warn again for store classes already warned about (tests; long-running apps)."""
    with _warned_lock:
        _warned.clear()
