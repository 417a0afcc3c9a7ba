"""Select-measure-estimate's settings: one declaration (the fields of ``MeasureOptions``) reaching the API, the
command line and the documentation, and what ``auto`` and the plan make of them."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from synthdp import cli
from synthdp.config import SynthesisConfig, option_doc
from synthdp.core.errors import InputError
from synthdp.datasets.demo import demo_schema
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.methods.measure.settings import measure_options_from_text
from synthdp.plan import make_plan

FIELDS = dataclasses.fields(MeasureOptions)


def _plan(**options):
    return make_plan(SynthesisConfig(epsilon=1.0, delta=1e-6, query_class="marginals:2", **options), demo_schema())


def test_every_setting_is_documented_in_the_api_and_the_help_with_its_default():
    """A new field reaches both with nothing else: the option's doc and --help are read off the declaration."""
    parser = cli.build_parser()
    generate = next(a for a in parser._actions if a.dest == "command").choices["generate"]
    help_text = " ".join(generate.format_help().split())
    doc = option_doc("measure_options")
    for f in FIELDS:
        assert f"{f.name} = " in doc, f.name
        assert f"{f.name} = " in help_text, f.name
    assert "rounds_per_attribute = 8: Planned rounds per attribute" in doc
    assert "support = 200000, support_iters = 100, support_final_iters = 400: Draws from the model" in doc


def test_every_scalar_setting_reads_from_text_as_its_default():
    """Each field written as text (its default) comes back equal: the command line reaches every scalar setting."""
    defaults = MeasureOptions()
    for f in FIELDS:
        value = getattr(defaults, f.name)
        if isinstance(value, (int, float, Fraction, str)) or value is None:
            text = "none" if value is None else str(value)
            assert getattr(measure_options_from_text([f"{f.name}={text}"]), f.name) == value, f.name
    assert measure_options_from_text([]) is None
    changed = measure_options_from_text(["refine_rounds=yes", "refine_split=halves"])
    assert (changed.refine_rounds, changed.refine_split) == (True, "halves")
    with pytest.raises(InputError, match="cannot read refine_rounds='maybe'"):
        measure_options_from_text(["refine_rounds=maybe"])


@pytest.mark.parametrize("pairs, message", [
    (["rounds_per_atribute=4"], r"unknown setting 'rounds_per_atribute'.*did you mean 'rounds_per_attribute'"),
    (["estimator=3"], r"'estimator' is not one number.*measure_options=MeasureOptions"),
    (["cover_share=half"], r"cannot read cover_share='half' as Fraction"),
    (["cover_share=1/2", "cover_share=1/4"], r"gives 'cover_share' twice"),
    (["cover_share"], r"expects NAME=VALUE"),
    (["selection_share=3/2"], r"selection_share must be a Fraction in \(0, 1\)"),
])
def test_a_bad_setting_is_refused_with_its_name(pairs, message):
    with pytest.raises(InputError, match=message):
        measure_options_from_text(pairs)


def test_the_settings_reach_the_plan_and_make_auto_choose_the_method():
    default = _plan(method="measure")
    given = _plan(measure_options=MeasureOptions(rounds_per_attribute=1, cover_share=Fraction(0)))
    assert given.method.name == "measure" and "settings given (measure_options)" in given.method_reason
    assert given.method_plan.options.rounds_per_attribute == 1
    assert default.method_plan.options == MeasureOptions()
    assert given.method_plan.footprint.value.rounds < default.method_plan.footprint.value.rounds
    with pytest.raises(InputError, match=r"\['measure_options'\] are settings of the select-measure-estimate"):
        _plan(method="game", measure_options=MeasureOptions(rounds_per_attribute=1))


def test_the_option_takes_only_the_settings_object_synthdp_exports():
    import synthdp

    assert synthdp.MeasureOptions is MeasureOptions
    with pytest.raises(InputError, match="measure_options must be select-measure-estimate's settings"):
        SynthesisConfig(epsilon=1.0, measure_options={"rounds_per_attribute": 1})
