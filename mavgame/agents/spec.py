"""Agent specs and the registry of agent kinds.

A spec is ``kind`` or ``kind:key=value,key=value`` (``stockfish:skill=3,movetime=50``); :func:`make_agent`
builds an agent from it (or takes an :class:`~mavgame.agents.base.Agent` or a Python callable as they are).

Each kind belongs to a family module of this package, which registers its kinds with :func:`register_agent`
when imported; the registry knows which module holds which kind without importing any of them
(:data:`_FAMILIES`), so it imports a family only when one of its kinds is asked for. Each kind declares its
options (names, types, defaults: :class:`Option`, derived from the factory's signature by
:func:`options_of`), and :func:`make_agent` refuses an unknown option, a value of the wrong type or choice and
a missing required option before the factory runs, naming the kind, the option and the kind's options
(:class:`AgentSpecError`). A kind that needs an optional dependency that is not installed (PyTorch) is
refused with :class:`AgentDependencyError` when it is asked for; any other error of a family module
propagates. :func:`describe_kinds` is the help text: every kind, one line on it and its options.
"""
from __future__ import annotations

import importlib
import inspect
import textwrap
import typing
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from .base import Agent, CallableAgent

__all__ = ["Option", "AgentKind", "AgentSpecError", "AgentDependencyError", "parse_spec", "register_agent",
           "make_agent", "agent_kinds", "agent_kind", "options_of", "describe_kinds", "OPTIONAL_DEPENDENCIES"]

#: kind -> the family module that registers it when imported (static: the registry imports a family only
#: when one of its kinds is asked for, so listing the kinds needs neither torch nor the model code)
_FAMILIES: Dict[str, str] = {
    **dict.fromkeys(("random", "minimax", "perfect", "python"), "mavgame.agents.basic"),
    **dict.fromkeys(("uci", "stockfish", "fairy"), "mavgame.agents.engines"),
    **dict.fromkeys(("mcts", "uct", "solver_mcts"), "mavgame.agents.mcts"),
    **dict.fromkeys(("mav", "mav_mcts", "mav_is"), "mavgame.agents.mav"),
    **dict.fromkeys(("alphabeta", "guided_ab", "policy", "policy_rollouts"), "mavgame.agents.policy"),
    **dict.fromkeys(("az", "azdb"), "mavgame.agents.alphazero"),
}

#: optional dependencies (top-level import names) that an agent kind may need, and what to install
OPTIONAL_DEPENDENCIES: Dict[str, str] = {"torch": "PyTorch (pip install torch)"}


class AgentSpecError(ValueError):
    """A spec names no known kind, an option its kind does not have, a bad value, or lacks a required
    option (the message names the kind, the option and the kind's options)."""


class AgentDependencyError(ImportError):
    """An agent kind needs an optional dependency (PyTorch) that is not installed."""


# ---------------------------------------------------------------------------------------------
# the grammar


def _parse_value(v: str) -> Any:
    low = v.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return v


def _split_spec(spec: str) -> Tuple[str, Dict[str, str]]:
    """``"kind:key=value,..."`` -> (kind, {key: value text})."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"empty agent spec {spec!r}")
    kind, _, rest = spec.strip().partition(":")
    raw: Dict[str, str] = {}
    if rest:
        for part in rest.split(","):
            if not part.strip():
                continue
            k, eq, v = part.partition("=")
            if not eq or not k.strip():
                raise AgentSpecError(f"agent spec {spec!r}: expected key=value, got {part!r}")
            raw[k.strip()] = v.strip()
    return kind.strip(), raw


def parse_spec(spec: str) -> Tuple[str, Dict[str, Any]]:
    """``"kind:key=value,key=value"`` -> (kind, {key: value}) with numbers and booleans parsed (the grammar
    alone: the options are checked against the kind by :func:`make_agent`)."""
    kind, raw = _split_spec(spec)
    return kind, {k: _parse_value(v) for k, v in raw.items()}


# ---------------------------------------------------------------------------------------------
# options

_SCALARS = (bool, int, float, str)
_TYPE_NAMES = {bool: "0|1", int: "int", float: "number", str: "text", None: "value"}
_NOT_AN_OPTION = object()   # a parameter no spec can give (a dict, a sequence, a callable)


@dataclass(frozen=True)
class Option:
    """One option of an agent kind: ``type`` bool, int, float, str or None (any value: numbers and booleans
    parsed as :func:`parse_spec` does); ``default`` (shown in the help; the factory's own default applies
    when the spec leaves the option out); ``nullable`` (``none`` accepted; default: when the default is
    None); ``choices`` (the values allowed); ``help`` (a few words, shown in the help)."""

    name: str
    type: Optional[type] = None
    default: Any = None
    required: bool = False
    nullable: Optional[bool] = None
    choices: Optional[Tuple[Any, ...]] = None
    help: str = ""

    def __post_init__(self):
        if self.type not in _SCALARS + (None,):
            raise TypeError(f"option {self.name!r}: type must be bool, int, float, str or None, not {self.type!r}")
        if self.nullable is None:
            object.__setattr__(self, "nullable", self.default is None)
        if self.choices is not None:
            object.__setattr__(self, "choices", tuple(self.choices))

    def what(self) -> str:
        """What the option takes, in words (``int``, ``0|1``, ``mean|max``)."""
        if self.choices:
            return "|".join(str(c) for c in self.choices)
        return _TYPE_NAMES[self.type]

    def parse(self, text: str) -> Any:
        """The value of ``text`` for this option (ValueError naming the option and the value)."""
        low = text.strip().lower()
        if low in ("none", "null"):
            if self.nullable:
                return None
            raise ValueError(f"{self.name} takes {self.what()}, not {text}")
        if self.type is None:
            value = _parse_value(text)
        elif self.type is str:
            value = text
        elif self.type is bool:
            v = _parse_value(text)
            if v not in (0, 1) or isinstance(v, float):   # True, False, 0, 1 (true/yes/on, false/no/off)
                raise ValueError(f"{self.name} must be 0 or 1, not {text}")
            value = bool(v)
        else:
            value = _parse_value(text)
            ok = isinstance(value, int) if self.type is int else isinstance(value, (int, float))
            if isinstance(value, bool) or not ok:
                raise ValueError(f"{self.name} must be {'an integer' if self.type is int else 'a number'}, "
                                 f"not {text!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{self.name} must be one of {', '.join(map(str, self.choices))}, not {text!r}")
        return value

    def describe(self) -> str:
        """``sims=200 (int)``, ``seed (int)``, ``checkpoint (text: a file, required)``, ``scoring=mean (mean|max)``."""
        what = self.what() + (f": {self.help}" if self.help else "")
        if self.required:
            return f"{self.name} ({what}, required)"
        if self.default is None or self.default == "":
            return f"{self.name} ({what})"
        d = int(self.default) if isinstance(self.default, bool) else self.default
        return f"{self.name}={d} ({what})"


def _type_hints(fn: Callable) -> Dict[str, Any]:
    target = fn.__init__ if isinstance(fn, type) else fn
    try:
        return typing.get_type_hints(target)
    except Exception:   # an annotation that does not resolve: read the defaults instead
        return {}


def _option_type(hint: Any, default: Any):
    """(type, nullable) of a parameter from its annotation and default, or _NOT_AN_OPTION."""
    nullable = default is None
    if hint is Any or hint is inspect.Parameter.empty or isinstance(hint, str):
        hint = None
    if typing.get_origin(hint) is Union:
        args = typing.get_args(hint)
        nullable = nullable or type(None) in args
        scalars = [a for a in args if a in _SCALARS]
        if scalars:
            hint = scalars[0]
        elif all(a is type(None) or a is Any for a in args):
            hint = None
        else:
            return _NOT_AN_OPTION
    if hint is None:
        return (type(default) if type(default) in _SCALARS else None), nullable
    if hint in _SCALARS:
        return hint, nullable
    return _NOT_AN_OPTION


def options_of(*callables: Callable, skip: Iterable[str] = (), required: Iterable[str] = (),
               choices: Optional[Mapping[str, Iterable[Any]]] = None, help: Optional[Mapping[str, str]] = None,
               extra: Iterable[Option] = ()) -> List[Option]:
    """The options of a factory whose keyword arguments flow through ``callables`` in turn (a factory, the
    class it builds, the search that class configures): every named parameter of each (the first one that
    names a parameter gives its default and type), typed by its annotation (``Optional[int]``: an int or
    ``none``) or else by its default, minus ``skip`` and the parameters no spec can give (dicts, sequences,
    callables). ``required``: options the spec must give; ``choices``: {option: allowed values};
    ``help``: {option: a few words}; ``extra``: options declared by hand (in the place of the parameter of
    the same name, else after the others)."""
    skip = set(skip)
    required = set(required)
    choices = dict(choices or {})
    helps = dict(help or {})
    given = {o.name: o for o in extra}
    out: Dict[str, Option] = {}
    for fn in callables:
        hints = _type_hints(fn)
        for p in inspect.signature(fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in skip or p.name in out or p.name == "self":
                continue
            if p.name in given:
                out[p.name] = given.pop(p.name)
                continue
            default = None if p.default is p.empty else p.default
            t = _option_type(hints.get(p.name, p.annotation), default)
            if t is _NOT_AN_OPTION:
                continue
            typ, nullable = t
            out[p.name] = Option(p.name, typ, default, required=p.name in required or p.default is p.empty,
                                 nullable=nullable and p.name not in required, choices=choices.get(p.name),
                                 help=helps.get(p.name, ""))
    out.update(given)   # the options declared by hand that no parameter names, last
    unknown = (required | set(choices) | set(helps)) - set(out)
    if unknown:
        raise ValueError(f"options_of: no parameter named {', '.join(sorted(unknown))}")
    return list(out.values())


# ---------------------------------------------------------------------------------------------
# the registry


@dataclass
class AgentKind:
    """A registered agent kind: its factory, options and one line of help. ``extra``: the factory also
    takes options it checks itself (``python``: the function's own keyword arguments)."""

    name: str
    factory: Callable[..., Agent]
    options: Dict[str, Option]
    help: str = ""
    extra: bool = False

    def option_list(self) -> str:
        """The option names, for messages."""
        names = ", ".join(self.options) or "none"
        return names + (" and the keyword arguments of the code it loads" if self.extra else "")

    def check(self, spec: str, raw: Mapping[str, str]) -> Dict[str, Any]:
        """The factory's keyword arguments from the spec's ``key=value`` texts (AgentSpecError naming the
        kind, the option and the kind's options)."""
        out: Dict[str, Any] = {}
        for key, text in raw.items():
            opt = self.options.get(key)
            if opt is None:
                if self.extra:
                    out[key] = _parse_value(text)
                    continue
                raise AgentSpecError(f"agent spec {spec!r}: the {self.name} agent has no option {key!r} "
                                     f"(its options: {self.option_list()})")
            try:
                out[key] = opt.parse(text)
            except ValueError as e:
                raise AgentSpecError(f"agent spec {spec!r}: {self.name}: {e} (its options: {self.option_list()})"
                                     ) from None
        for opt in self.options.values():
            if opt.required and opt.name not in out:
                what = f" ({opt.help})" if opt.help else ""
                raise AgentSpecError(f"agent spec {spec!r}: the {self.name} agent needs {opt.name}=...{what} "
                                     f"(its options: {self.option_list()})")
        return out

    def describe(self, width: int = 100) -> List[str]:
        """The kind's lines of the help text: the kind and its help, then its options."""
        pad = " " * 19
        lines = textwrap.wrap(self.help or "(no description)", width, initial_indent=f"  {self.name:<16} ",
                              subsequent_indent=pad)
        opts = [o.describe() for o in self.options.values()]
        if self.extra:
            opts.append("and the keyword arguments of the code it loads")
        lines += textwrap.wrap("options: " + (", ".join(opts) if opts else "none"), width,
                               initial_indent=pad, subsequent_indent=pad + "  ", break_on_hyphens=False)
        return lines


_KINDS: Dict[str, AgentKind] = {}


def register_agent(kind: str, factory: Callable[..., Agent], options: Optional[Iterable[Union[Option, str]]] = None,
                   help: Optional[str] = None, extra: Optional[bool] = None) -> AgentKind:
    """Make ``kind`` available in specs: ``factory(**options)`` builds the agent.

    ``options``: the options the kind takes (:class:`Option` objects, or names taking any value); None:
    derived from the factory's signature (:func:`options_of`). ``extra``: the factory takes other options too
    and checks them itself (default: when ``options`` is None and the factory takes ``**kwargs``).
    ``help``: one line for the help text (default: the first line of the factory's docstring)."""
    if not isinstance(kind, str) or not kind or any(c in kind for c in ":=, "):
        raise ValueError(f"invalid agent kind {kind!r}")
    if not callable(factory):
        raise TypeError(f"agent kind {kind!r}: the factory must be callable, not {type(factory).__name__}")
    if options is None:
        opts = options_of(factory)
        if extra is None:
            try:
                extra = any(p.kind == p.VAR_KEYWORD for p in inspect.signature(factory).parameters.values())
            except (TypeError, ValueError):
                extra = True
    else:
        opts = [o if isinstance(o, Option) else Option(str(o)) for o in options]
    names = [o.name for o in opts]
    if len(set(names)) != len(names):
        raise ValueError(f"agent kind {kind!r}: an option is declared twice ({', '.join(names)})")
    if help is None:
        doc = inspect.getdoc(factory) or ""
        help = doc.strip().splitlines()[0] if doc.strip() else ""
    info = AgentKind(kind, factory, {o.name: o for o in opts}, " ".join(help.split()), bool(extra))
    _KINDS[kind] = info
    return info


def _missing_dependency(e: ImportError) -> Optional[str]:
    """The optional dependency whose absence raised ``e``, or None (a real error, to propagate)."""
    name = (getattr(e, "name", None) or "").split(".")[0]
    return name if name in OPTIONAL_DEPENDENCIES else None


def agent_kind(kind: str) -> AgentKind:
    """The registered kind, its family module imported first if need be (AgentSpecError for an unknown kind,
    AgentDependencyError when its family needs an optional dependency that is missing; any other error of
    the family module propagates)."""
    info = _KINDS.get(kind)
    if info is None and kind in _FAMILIES:
        module = _FAMILIES[kind]
        try:
            importlib.import_module(module)
        except ImportError as e:
            dep = _missing_dependency(e)
            if dep is None:
                raise
            raise AgentDependencyError(f"the {kind} agent needs {OPTIONAL_DEPENDENCIES[dep]}: {e}") from e
        info = _KINDS.get(kind)
        if info is None:
            raise RuntimeError(f"{module} did not register the agent kind {kind!r}")
    if info is None:
        raise AgentSpecError(f"unknown agent kind {kind!r} (known: {', '.join(agent_kinds())})")
    return info


def agent_kinds() -> List[str]:
    """Every agent kind: those of the family modules (imported or not) and those registered since."""
    return sorted(set(_FAMILIES) | set(_KINDS))


def _ordered_kinds() -> List[str]:
    """The kinds family by family in the table's order, then the ones registered from elsewhere."""
    return list(_FAMILIES) + [k for k in _KINDS if k not in _FAMILIES]


HELP_HEADER = "agent specs: KIND or KIND:KEY=VALUE,KEY=VALUE; the kinds and their options:"


def describe_kinds(width: int = 100, header: Optional[str] = HELP_HEADER) -> str:
    """The help text of agent specs (for ``--help`` pages, lines of at most ``width`` characters): ``header``
    (the grammar; None: none), then every kind (:func:`agent_kinds`) with one line on it and its options
    (name, default, type). A kind whose optional dependency is missing says so. It imports every family
    module (not torch): build it when a help page is shown."""
    out = [header, ""] if header else []
    for kind in _ordered_kinds():
        try:
            info = agent_kind(kind)
        except AgentDependencyError as e:
            out.append(f"  {kind:<16} {e}")
            continue
        out += info.describe(width)
    return "\n".join(out) + "\n"


def make_agent(spec: Union[str, Agent, Callable], name: Optional[str] = None) -> Agent:
    """An agent from a spec string (``kind:key=value,...``; :func:`describe_kinds` lists the kinds), an
    Agent (returned, renamed if ``name``), or a callable ``fn(state) -> move``.

    Refused before the agent is built (:class:`AgentSpecError`, a ValueError): an unknown kind, an option
    the kind does not have, a value of the wrong type or outside its choices, a missing required option;
    :class:`AgentDependencyError` (an ImportError) when the kind needs PyTorch and it is not installed."""
    if isinstance(spec, Agent):
        if name:
            spec.name = name
        return spec
    if callable(spec) and not isinstance(spec, str):
        return CallableAgent(spec, name=name)
    kind, raw = _split_spec(spec)
    try:
        info = agent_kind(kind)
    except AgentSpecError:
        raise AgentSpecError(f"unknown agent kind {kind!r} in spec {spec!r} (known: {', '.join(agent_kinds())})"
                             ) from None
    kwargs = info.check(spec, raw)
    try:
        agent = info.factory(**kwargs)
    except TypeError as e:
        raise AgentSpecError(f"agent spec {spec!r}: {e}") from None
    except ImportError as e:
        dep = _missing_dependency(e)
        if dep is None:
            raise
        raise AgentDependencyError(f"agent spec {spec!r}: the {kind} agent needs {OPTIONAL_DEPENDENCIES[dep]} "
                                   f"here: {e}") from e
    agent.spec = spec
    if name:
        agent.name = name
    return agent
