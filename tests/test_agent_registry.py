"""The registry of agent kinds (mavgame/agents/spec.py): every kind in the help text with its options, unknown
kinds and options refused naming the valid ones, bad values refused when the spec is made (never after the first
move), missing optional dependencies named, any other error of a family module propagated, new kinds in the help."""
import subprocess
import sys
import textwrap

import pytest

import mavgame
from mavgame import agents
from mavgame.agents import (AgentDependencyError, AgentSpecError, Option, agent_kind, agent_kinds, describe_kinds,
                            make_agent, options_of, register_agent)
from mavgame.agents import spec as spec_module

FAMILY_KINDS = {
    "mavgame.agents.basic": {"random", "minimax", "perfect", "python"},
    "mavgame.agents.engines": {"uci", "stockfish", "fairy"},
    "mavgame.agents.mcts": {"mcts", "uct", "solver_mcts"},
    "mavgame.agents.mav": {"mav", "mav_mcts", "mav_is"},
    "mavgame.agents.policy": {"alphabeta", "guided_ab", "policy", "policy_rollouts"},
    "mavgame.agents.alphazero": {"az", "azdb"},
}


def _kind_block(text: str, kind: str) -> str:
    """The lines of one kind in the help text (its line and the indented lines after it)."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"  {kind} "))
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:3].strip()), len(lines))
    return "\n".join(lines[start:end])


def test_the_static_table_names_every_family_and_its_kinds():
    assert set(agent_kinds()) >= {k for ks in FAMILY_KINDS.values() for k in ks}
    for module, kinds in FAMILY_KINDS.items():
        for kind in kinds:
            assert spec_module._FAMILIES[kind] == module
            assert agent_kind(kind).factory.__module__ == module, kind   # registered by its own family


def test_every_kind_is_in_the_help_with_its_options():
    text = describe_kinds()
    assert text.startswith("agent specs: KIND or KIND:KEY=VALUE")
    for kind in agent_kinds():
        block = " ".join(_kind_block(text, kind).split())
        info = agent_kind(kind)
        assert (" ".join(info.help.split()) or "(no description)") in block, kind
        assert info.help or kind not in spec_module._FAMILIES, kind
        for name, opt in info.options.items():
            assert f"{name}=" in block or f"{name} (" in block, (kind, name)
    assert all(len(ln) <= 100 for ln in text.splitlines())
    assert describe_kinds(header=None).startswith("  random ")
    assert "azdb" in text and "mav_is" in text          # the kinds the old help table left out


def test_options_carry_types_and_defaults_from_the_signatures():
    mcts = agent_kind("mcts").options
    assert (mcts["sims"].type, mcts["evaluator"].default, mcts["c_puct"].type) == (int, "playout", float)
    assert mcts["c_puct"].nullable and not mcts["k"].nullable and "value_range" not in mcts   # not from a spec
    assert mcts["evaluator"].choices[:2] == ("playout", "constant") and "games" not in mcts
    assert agent_kind("mav").options["mirror"].type is bool and agent_kind("uct").options["c"].type is float
    assert agent_kind("az").options["checkpoint"].required and agent_kind("azdb").options["checkpoint"].required
    assert agent_kind("uci").options["path"].required and agent_kind("python").options["fn"].required
    assert agent_kind("mav_is").options["breadth"].default == 2                    # mavgame.analysis.mav_is_ladder reads it


def test_an_unknown_kind_is_refused_naming_the_kinds():
    with pytest.raises(AgentSpecError, match=r"unknown agent kind 'nope' in spec 'nope:x=1' \(known: alphabeta, az, "):
        make_agent("nope:x=1")
    with pytest.raises(ValueError, match="empty agent spec"):
        make_agent("  ")


@pytest.mark.parametrize("kind", sorted(set(spec_module._FAMILIES) - {"python"}))
def test_an_unknown_option_is_refused_naming_the_kinds_options(kind):
    names = ", ".join(agent_kind(kind).options)
    with pytest.raises(AgentSpecError) as e:
        make_agent(f"{kind}:bogus_option=1")
    msg = str(e.value)
    assert f"the {kind} agent has no option 'bogus_option'" in msg and f"(its options: {names})" in msg


@pytest.mark.parametrize("kind", sorted(spec_module._FAMILIES))
def test_a_value_of_the_wrong_type_is_refused_when_the_spec_is_made(kind):
    info = agent_kind(kind)
    typed = [o for o in info.options.values() if o.type in (int, float, bool)]
    assert typed or kind == "python", kind
    for opt in typed:
        with pytest.raises(AgentSpecError) as e:
            make_agent(f"{kind}:{opt.name}=not_a_number")
        assert kind in str(e.value) and opt.name in str(e.value) and "its options:" in str(e.value)


@pytest.mark.parametrize("kind", sorted(k for k in spec_module._FAMILIES
                                        if any(o.required for o in agent_kind(k).options.values())))
def test_a_missing_required_option_is_refused(kind):
    with pytest.raises(AgentSpecError, match=rf"the {kind} agent needs \w+=\.\.\."):
        make_agent(kind)


@pytest.mark.parametrize("spec, words", [
    ("mcts:bogus=1", "no option 'bogus'"),                        # used to fail in the first game's setup
    ("mcts:c_puct=-1", "c_puct"),                                 # the search's checks, now at make_agent
    ("solver_mcts:eps=2", "eps"),
    ("mcts:virtual_count=sometimes", "virtual_count must be one of dynamic, static, none"),
    ("mcts:evaluator=magic", "evaluator must be one of playout"),  # used to fail at the first search
    ("mcts:evaluator=playout,path=/bin/sf", "path is the engine of the stockfish or uci evaluator"),
    ("mav_mcts:k=-1", "k"),
    ("perfect:tiebreak=left", "tiebreak must be one of random, center"),   # used to fail in the first game
    ("stockfish:hash=big", "hash must be an integer"),             # used to fail when the engine started
    ("stockfish:threads=1.5", "threads must be an integer"),
    ("uct:c=fast", "c must be a number"),
    ("mav:mirror=2", "mirror must be 0 or 1, not 2"),
    ("python:fn=builtins:len,bogus=1", "cannot be called as fn(state, bogus=...)"),   # used to fail at the first move
    ("python:fn=uuid:uuid4", "cannot be called as fn(state)"),
    ("az:tau=fast", "tau must be a number"),
    ("azdb:checkpoint=x.pt,rewards=all", "rewards must be one of path, vd, extrinsic"),
    ("random:seed=none,seed=x", "seed must be an integer"),
])
def test_specs_that_failed_after_the_first_move_fail_in_make_agent(spec, words):
    with pytest.raises(ValueError) as e:
        make_agent(spec)
    assert words in str(e.value)


def test_values_are_parsed_by_the_options_type():
    assert make_agent("uct:sims=30,c=1").c == 1.0 and make_agent("uct:sims=30").name == "uct-30"
    assert make_agent("uct:movetime=100").name == "uct-100ms"           # an int stays an int (the name)
    assert make_agent("mav:mirror=true,best=0", name="m").mirror is True
    assert make_agent("mcts:c_puct=none,sims=5").kwargs["c_puct"] is None
    perfect = make_agent("perfect:max_nodes=1000,seed=3")
    assert perfect.kw == {"max_nodes": 1000, "seed": 3}
    from mavgame.agents.basic import PerfectConnectFourAgent, perfect_connect_four
    assert isinstance(perfect_connect_four(max_nodes=1000), PerfectConnectFourAgent)   # options of other games
    opt = Option("flag", bool, False)
    assert [opt.parse(t) for t in ("1", "0", "true", "off", "yes")] == [True, False, True, False, True]
    for bad in ("2", "0.5", "maybe", "none"):
        with pytest.raises(ValueError, match="flag"):
            opt.parse(bad)
    assert Option("path", str).parse("123") == "123" and Option("n", int).parse("none") is None
    assert Option("x", float, 1.0).parse("3") == 3 and Option("v").parse("2.5") == 2.5
    with pytest.raises(ValueError, match="x takes number, not none"):
        Option("x", float, 1.0).parse("none")


def test_a_new_kind_registered_from_a_test_appears_in_the_help(monkeypatch):
    from mavgame.agents import CallableAgent

    def first_move(first: bool = True, *, skip: int = 0, label: str = "first"):
        """Always the first legal move (or the last one), after skipping some."""
        return CallableAgent(lambda s: int(s.legal_actions()[skip if first else -1 - skip]), name=label)

    monkeypatch.setattr(spec_module, "_KINDS", dict(spec_module._KINDS))
    info = register_agent("first_move", first_move)
    assert list(info.options) == ["first", "skip", "label"] and not info.extra
    assert info.help == "Always the first legal move (or the last one), after skipping some."
    block = _kind_block(describe_kinds(), "first_move")
    assert "Always the first legal move" in block and "first=1 (0|1), skip=0 (int), label=first (text)" in block
    assert "first_move" in agent_kinds()
    st = mavgame.State("tictactoe")
    assert make_agent("first_move:skip=2").act(st) == 2 and make_agent("first_move:first=0").act(st) == 8
    with pytest.raises(AgentSpecError, match=r"no option 'jump' \(its options: first, skip, label\)"):
        make_agent("first_move:jump=1")
    # a factory taking **kwargs takes any option (it checks them itself); declared options are checked
    register_agent("anything", lambda **kw: CallableAgent(lambda s: int(s.legal_actions()[0]), name=str(kw)))
    assert make_agent("anything:a=1,b=x").name == "{'a': 1, 'b': 'x'}"
    register_agent("declared", lambda **kw: CallableAgent(lambda s: 0), options=[Option("n", int, 1), "free"],
                   help="declared options")
    assert "n=1 (int), free (value)" in _kind_block(describe_kinds(), "declared")
    with pytest.raises(AgentSpecError, match="n must be an integer"):
        make_agent("declared:n=x")
    with pytest.raises(ValueError, match="invalid agent kind"):
        register_agent("bad:kind", first_move)
    with pytest.raises(ValueError, match="no parameter named nope"):
        options_of(first_move, required=("nope",))


def _family(tmp_path, monkeypatch, name, body):
    """A family module ``name`` in tmp_path, registering the kind ``name`` after ``body`` runs."""
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body) + textwrap.dedent(f"""
        from mavgame.agents import CallableAgent, register_agent
        register_agent({name!r}, lambda: CallableAgent(lambda s: 0), help="a test family")
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(spec_module._FAMILIES, name, name)
    monkeypatch.setattr(spec_module, "_KINDS", dict(spec_module._KINDS))
    monkeypatch.delitem(sys.modules, name, raising=False)


def test_a_family_module_raising_an_error_propagates(tmp_path, monkeypatch):
    _family(tmp_path, monkeypatch, "broken_family", "raise RuntimeError('a bug in the family module')\n")
    with pytest.raises(RuntimeError, match="a bug in the family module"):
        make_agent("broken_family")
    with pytest.raises(RuntimeError, match="a bug in the family module"):
        describe_kinds()                                       # the help hides no error either
    _family(tmp_path, monkeypatch, "typo_family", "import mavgame.no_such_module\n")
    with pytest.raises(ImportError) as e:
        make_agent("typo_family")
    assert not isinstance(e.value, AgentDependencyError) and e.value.name == "mavgame.no_such_module"


def test_a_missing_optional_dependency_is_named_when_the_kind_is_asked_for(tmp_path, monkeypatch):
    _family(tmp_path, monkeypatch, "torch_family", "import torch\n")
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "torch", None)                  # torch not installed
        with pytest.raises(AgentDependencyError, match=r"the torch_family agent needs PyTorch \(pip install torch\)"):
            make_agent("torch_family")
        assert "torch_family     the torch_family agent needs PyTorch" in describe_kinds()
        assert "torch_family" in agent_kinds()
    pytest.importorskip("torch")
    assert make_agent("torch_family").act(mavgame.State("tictactoe")) == 0   # installed: the family loads


def test_without_torch_only_what_needs_it_is_refused():
    """A process without torch: every kind is listed with its options, the native MAV agent plays, and the
    agents that need PyTorch say so when made."""
    code = textwrap.dedent("""
        import sys
        sys.modules["torch"] = None
        import mavgame
        from mavgame.agents import AgentDependencyError, describe_kinds, make_agent
        text = describe_kinds()
        assert "checkpoint (text: a file written by `mavgame az`, required)" in text, text
        agent = make_agent("mav")                                   # the native engine: no torch
        assert mavgame.State("connect_four").is_legal(mavgame.State("connect_four").action_from_str(
            str(agent.act(mavgame.State("connect_four")))))
        for spec, words in (("az:checkpoint=x.pt", "the az agent needs PyTorch"),
                            ("azdb:checkpoint=x.pt", "the azdb agent needs PyTorch"),
                            ("mav:backend=torch", "the mav agent needs PyTorch")):
            try:
                make_agent(spec)
            except AgentDependencyError as e:
                assert words in str(e), e
            else:
                raise AssertionError(spec)
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_the_package_re_exports_the_registry():
    assert mavgame.make_agent is agents.make_agent and mavgame.register_agent is agents.register_agent
    assert mavgame.Agent is agents.Agent and mavgame.AgentError is agents.AgentError
    assert issubclass(AgentSpecError, ValueError) and issubclass(AgentDependencyError, ImportError)
