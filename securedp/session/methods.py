"""The ``Session`` method of a statistic, made from its ``prepare_<name>`` function (one rule for all of them)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar, overload

from securedp.ledger.release import PreparedRelease, Release
from securedp.mechanisms.statistic import check_call

if TYPE_CHECKING:
    from securedp.session.session import Session

P = ParamSpec("P")
RL = TypeVar("RL", bound=Release)


@overload
def session_method(prepare: Callable[P, PreparedRelease]) -> Callable[Concatenate[Session, P], Release]: ...


@overload
def session_method(prepare: Callable[P, PreparedRelease],
                   result: type[RL]) -> Callable[Concatenate[Session, P], RL]: ...


def session_method(prepare: Callable[P, PreparedRelease],
                   result: type[Release] = Release) -> Callable[Concatenate[Session, P], Release]:
    """The ``Session`` method of a statistic: ``prepare``'s parameters, charged to the session.

    ``session.x(*args, **kwargs)`` prepares the release in the session's
    error mode (analyst-facing or not), then charges, draws and audits it
    (:meth:`Session.release`). Its signature is ``prepare``'s, so
    ``help(Session.x)`` and type checkers see every parameter; ``result`` is
    the type of the release it returns (a :class:`~securedp.tables.table.TableRelease` for a table).
    """
    name = prepare.__name__.removeprefix("prepare_")

    def method(self: Session, /, *args: P.args, **kwargs: P.kwargs) -> Release:
        check_call(signature, f"Session.{name}", args, kwargs)
        released = self.release(self.prepare(prepare, *args, **kwargs))
        assert isinstance(released, result)
        return released

    signature = inspect.signature(prepare)
    method.__name__, method.__qualname__ = name, f"Session.{name}"
    method.__doc__ = f":func:`securedp.{name}`, charged to this session."
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY), *signature.parameters.values()],
        return_annotation=result.__name__)
    return method
