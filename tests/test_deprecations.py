"""Old names keep working for one release, with a DeprecationWarning naming the new one."""
import pytest


def test_engine_annotation_old_name():
    from mavgame import annotate, mav
    with pytest.warns(DeprecationWarning, match="EngineAnnotation"):
        old = annotate.Annotation
    assert old is annotate.EngineAnnotation and old is not mav.Annotation
    with pytest.warns(DeprecationWarning):
        from mavgame.annotate import Annotation  # noqa: F401
    with pytest.raises(AttributeError):
        annotate.NoSuchThing


def test_uci_go_result_old_name():
    from mavgame import mcts, uci
    with pytest.warns(DeprecationWarning, match="GoResult"):
        old = uci.SearchResult
    assert old is uci.GoResult and old is not mcts.SearchResult
    with pytest.raises(AttributeError):
        uci.NoSuchThing
