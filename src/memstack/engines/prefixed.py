"""An engine view confined to one key prefix: tenant isolation in the storage layer.

Every key and channel a tier uses through a :class:`PrefixedEngine` is rewritten to
``{prefix}{key}``, and scans only ever see (and return, unprefixed) keys under the prefix, so code
running for tenant A cannot name, read or infer a key of tenant B, whatever ids it is handed. The
view shares the inner engine's connections; closing the view leaves the inner engine open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, Final

from ..foundation.errors import InvalidInput, NotANumber
from ..foundation.keyspace import DEFAULT_TENANT, TENANT_RULE, tenant_prefix
from ._checks import check_ops
from ._once import scan_once
from .base import SCAN_PAGE, BatchResult, Engine, Op, Subscription, check_page
from .bulk import delete_keys
from .commands import COMMANDS, Command
from .forwarding import ForwardingEngine

__all__ = ["DEFAULT_TENANT", "TENANT_RULE", "PrefixedEngine", "check_tenant", "tenant_engine"]


def _prefixed_args(command: Command) -> tuple[int, ...] | None:
    """Positions of the arguments that get the prefix (None: every argument)."""
    if command.keys == "all":
        return None
    return (0,) if command.keys == "first" or command.channel else ()


# Which positional arguments of each op are keys (or a channel), from the command table.
_KEY_ARGS: Final = {name: _prefixed_args(command) for name, command in COMMANDS.items()}


class PrefixedEngine(ForwardingEngine):
    """A view of ``inner`` where every key and channel lives under ``prefix``.

    ``page`` is how many keys :meth:`scan` and :meth:`flush` read from ``inner`` at a time: a
    tenant of millions of keys is scanned and flushed in bounded memory. :meth:`raw_items`,
    :meth:`internal_items`, :meth:`drop_internal` and :meth:`compact` are the inner engine's, as
    the base forwards them: its records and files hold every tenant's data (a verification must
    look everywhere; names keep their prefixes), and its own records are shared by every tenant.
    """

    def __init__(self, inner: Engine, prefix: str, *, page: int = SCAN_PAGE) -> None:
        if "{" in prefix or "}" in prefix:
            raise InvalidInput(f"engine prefix {prefix!r}: braces would change Redis Cluster hash slots")
        super().__init__(inner)
        self.prefix = prefix
        self.page = check_page(page)

    @property
    def identity(self) -> str:
        return f"{self.inner.identity}|{self.prefix}"

    def _rewrite(self, op: Op) -> Op:
        name, args = op
        if args.__class__ is not tuple:  # the rewrite would make a tuple of it: left to check_ops
            raise TypeError("op arguments must be a tuple")
        positions = _KEY_ARGS[name]
        p = self.prefix
        if positions is None:
            return name, tuple(p + a for a in args)
        if positions == (0,):  # most ops: one key, first
            return name, (p + args[0], *args[1:])
        out: list[Any] = list(args)
        for i in positions:
            out[i] = p + out[i]
        return name, tuple(out)

    # The inner engine checks every op before it runs any (a failing batch changes nothing), so the
    # ops are checked here only when that check or the rewrite fails: the error then names the
    # problem as the caller wrote it, without the prefix (a bulk write's ops were checked twice,
    # about 9 % of its time).
    def execute(self, ops: Sequence[Op]) -> BatchResult:
        rewritten = self._rewritten(ops)
        try:
            return self.inner.execute(rewritten)
        except (InvalidInput, NotANumber):
            check_ops(ops)
            raise

    def execute_many(self, batches: Sequence[Sequence[Op]]) -> list[BatchResult]:
        rewritten = [self._rewritten(ops) for ops in batches]
        try:
            return self.inner.execute_many(rewritten)
        except (InvalidInput, NotANumber):
            for ops in batches:
                check_ops(ops)
            raise

    def _rewritten(self, ops: Sequence[Op]) -> list[Op]:
        try:
            return [self._rewrite(op) for op in ops]
        except Exception:
            check_ops(ops)
            raise

    def scan(self, prefix: str) -> Iterator[str]:
        """Live keys of the view starting with ``prefix``, each once, read page by page as the
        caller iterates (an engine that cannot reach its keys raises here, at the call)."""
        cut = len(self.prefix)
        pages = partial(self.inner.scan_pages, self.prefix + prefix, self.page)
        # Redis' SCAN may give a key twice: each once, in bounded memory (see engines._once).
        keys = scan_once(pages) if self.scan_repeats else (key for page in pages() for key in page)
        return (key[cut:] for key in keys)

    def scan_pages(self, prefix: str, page: int = SCAN_PAGE) -> Iterator[list[str]]:
        cut = len(self.prefix)
        pages = self.inner.scan_pages(self.prefix + prefix, page)
        return ([key[cut:] for key in keys] for keys in pages)

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        return self.inner.subscribe(self.prefix + channel, callback)

    def flush(self) -> None:
        """Delete every key under the prefix (never the inner engine's other keys)."""
        # Page by page, each page deleted (in bounded batches grouped by hash slot) before the
        # next is read: memory stays one page whatever the tenant holds. Deleting behind the scan
        # is safe on every engine (keyset pages resume after the last key; SCAN's cursor
        # still reaches every key that was there when it began).
        for keys in self.inner.scan_pages(self.prefix, self.page):
            delete_keys(self.inner, keys)

    def __repr__(self) -> str:
        return f"<PrefixedEngine {self.prefix!r} on {self.inner!r}>"


def check_tenant(tenant: object) -> str:
    """``tenant`` if it is a valid tenant name.

    Raises:
        InvalidInput: ``tenant`` is not 1-64 characters of ``[A-Za-z0-9_-]``.
    """
    if not isinstance(tenant, str) or TENANT_RULE.fullmatch(tenant) is None:
        raise InvalidInput(f"tenant {tenant!r}: must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'")
    return tenant


def tenant_engine(inner: Engine, tenant: str) -> PrefixedEngine:
    """The view of ``inner`` that holds tenant ``tenant``'s data (``t:{tenant}:…``).

    Raises:
        InvalidInput: ``tenant`` is not 1-64 characters of ``[A-Za-z0-9_-]``.
    """
    return PrefixedEngine(inner, tenant_prefix(check_tenant(tenant)))
