"""Value classes (engine._values): equal and hashed by their fields, and the
match's makers build exactly what calling the class builds."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from engine import Card, Colour, SecretCard
from engine import match as match_module
from engine import scoring as scoring_module
from engine._values import maker, value_class
from engine.events import CardDrawn, CardKept

PINK3 = Card.of("pink", 3)


@pytest.mark.parametrize(("module", "least"), [(match_module, 12), (scoring_module, 4)])
def test_every_maker_of_the_match_builds_what_its_class_builds(module: object, least: int) -> None:
    """Same type, same fields, equal and equally hashed, for each maker the match
    and the final scoring use (MajorityPlace has a field called value: R21's)."""
    makers = {
        name: value
        for name, value in vars(module).items()
        if name.startswith("_") and getattr(value, "__name__", "").startswith("make_")
    }
    assert len(makers) >= least
    for name, make in makers.items():
        cls = getattr(module, make.__name__.removeprefix("make_"))
        fields = [f.name for f in dataclasses.fields(cls)]
        values = [f"value of {field}" for field in fields]
        made, called = make(*values), cls(*values)
        assert type(made) is cls, name
        assert made == called and hash(made) == hash(called), name
        assert [getattr(made, field) for field in fields] == values, name


def test_value_classes_compare_hash_and_pickle_by_fields() -> None:
    """Equal fields, equal values: in sets, dicts and through pickle."""
    one, two = CardKept(0, PINK3, 2), CardKept(0, PINK3, 2)
    assert one == two and one is not two and len({one, two}) == 1
    other: object = CardDrawn(0, PINK3, 2)  # the same fields, another event
    assert one != CardKept(0, PINK3, 1) and one != other
    assert pickle.loads(pickle.dumps(one)) == one
    assert SecretCard(1, PINK3) == SecretCard(1, Card(Colour.PINK, 3))


def test_maker_refuses_classes_whose_init_does_more() -> None:
    """A default or a __post_init__ would be skipped: maker refuses such a class."""

    @value_class
    class WithDefault:
        seat: int = 0

    @value_class
    class WithCheck:
        seat: int

        def __post_init__(self) -> None:
            raise AssertionError

    for cls in (WithDefault, WithCheck):
        with pytest.raises(TypeError):
            maker(cls)
