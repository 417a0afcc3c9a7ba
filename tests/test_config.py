"""One declaration of options: :class:`SynthesisConfig`, and what is derived from it or checked against it.

The function's and the class's signatures and docstrings, the command's flags
and ``--help``, and the rule table are each compared with the declaration, so
an option added in one place only makes a test red.
"""

from __future__ import annotations

import dataclasses
import inspect
from fractions import Fraction

import pandas as pd
import pytest

import synthdp.api
from synthdp import draft_schema, quality_report, tune
from synthdp.api import PLAN_DEFAULTS, Synthesizer, generate_synthetic
from synthdp.cli import main, parser as cli
from synthdp.cli.generate import generate_options
from synthdp.config import GROUPS, SynthesisConfig, option_doc, options_in
from synthdp.core.errors import InputError, UnknownOptionError
from synthdp.core.schema import PrivacyWarning, Schema
from synthdp.core.parameters import RESOLVED_RULES, RULES
from synthdp.methods.game.settings import GameSettings
from synthdp.methods.measure.settings import MeasureOptions

FIELDS = dataclasses.fields(SynthesisConfig)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_every_option_has_exactly_one_rule_and_every_rule_an_option():
    assert sorted(RULES) == sorted(SynthesisConfig.names())
    assert not set(RESOLVED_RULES) & set(RULES)  # the plan's resolved values are not options


def test_every_option_has_a_group_and_its_documentation():
    for f in FIELDS:
        assert f.metadata["group"] in GROUPS, f.name
        doc = option_doc(f.name, PLAN_DEFAULTS)
        assert len(doc) > 20 and doc.endswith((".", ")")), (f.name, doc)
        assert "$" not in doc, f"{f.name}: a $NAME the planner does not define: {doc}"
    assert GameSettings.names() == options_in("game") and set(options_in("game")) >= {"rounds", "oracle", "time_limit"}


def test_signatures_and_docstrings_are_the_declaration():
    for function, skip in ((generate_synthetic, "df"), (Synthesizer.__init__, "self")):
        params = inspect.signature(function).parameters
        assert [p for p in params if p != skip] == ["query_class", *(n for n in SynthesisConfig.names()
                                                                     if n != "query_class")]
        for f in FIELDS:
            assert params[f.name].default == (inspect.Parameter.empty if f.default is dataclasses.MISSING
                                              else f.default), f.name
            assert params[f.name].annotation == f.type, f.name  # as written (postponed annotations)
            expected = "POSITIONAL_OR_KEYWORD" if f.name == "query_class" else "KEYWORD_ONLY"
            assert params[f.name].kind.name == expected, f.name
    for documented in (generate_synthetic, Synthesizer):
        text = _flat(inspect.getdoc(documented))
        for name in SynthesisConfig.names():
            assert _flat(option_doc(name, PLAN_DEFAULTS)) in text, f"{documented.__name__}: {name}"


def test_every_parameter_reaches_its_own_option(monkeypatch):
    """The entry points pass each parameter by name: a distinct value per parameter comes back under that name, from
    the Synthesizer's attributes (``get_params``, read off its signature) and in the config generate_synthetic
    builds (its fields are given as is: ``SynthesisConfig`` checks them after construction)."""
    given = {name: f"value of {name}" for name in SynthesisConfig.names()}
    assert Synthesizer(**given).get_params() == given
    assert {name: getattr(Synthesizer(**given), name) for name in given} == given
    seen = {}

    def build(**options):
        seen.update(options)
        raise RuntimeError("built")

    monkeypatch.setattr(synthdp.api, "SynthesisConfig", build)
    with pytest.raises(RuntimeError, match="built"):
        generate_synthetic("no-such-file.csv", **given)
    assert seen == given


@pytest.mark.parametrize("call", [
    lambda: generate_synthetic("no-such-file.csv", epsilon=1, round=3),
    lambda: Synthesizer(epsilon=1, round=3),
])
def test_a_misspelt_keyword_of_the_explicit_signatures_is_refused_with_the_nearest_names(call):
    """The message getting-started promises, before anything is read; a TypeError as Python's own refusal is."""
    with pytest.raises(UnknownOptionError, match=r"^unknown parameter 'round'; did you mean 'rounds' or 'bounds'\?$"):
        call()
    assert issubclass(UnknownOptionError, TypeError) and issubclass(UnknownOptionError, InputError)


def test_a_warning_of_the_checked_entry_point_points_at_the_callers_line():
    """The keyword check wraps generate_synthetic: the run's warnings still name the user's line, not the wrapper's."""
    with pytest.warns(PrivacyWarning, match="above 1/n_rows") as caught, pytest.raises(InputError):
        generate_synthetic("no-such-file.csv", epsilon=1, delta=1e-3, n_rows=10_000)  # warned, then not read
    assert caught[0].filename == __file__
    with pytest.warns(UserWarning, match="no declared type") as caught:
        Schema.from_dataframe(pd.DataFrame({"a": [1.0, 2.0]}), learn_bounds=["a"])
    assert caught[0].filename == __file__


@pytest.mark.parametrize("call, near", [
    (lambda: draft_schema(pd.DataFrame({"a": ["x"]}), datetime=["a"]), "'datetimes'"),
    (lambda: Schema.from_dataframe(pd.DataFrame({"a": ["x"]}), categoricals=["a"]), "'categorical'"),
    (lambda: quality_report(pd.DataFrame({"a": ["x"]}), pd.DataFrame({"a": ["x"]}), targt="a"), "'target'"),
    (lambda: MeasureOptions(max_round=3), "'max_rounds'"),
    (lambda: tune(pd.DataFrame({"a": ["x"]}), "marginals:1", [{}], epsilon=1, eval_workload="marginals:1", n_out=1,
                  categoriess={}), "'categories'"),
])
def test_the_other_entry_points_with_many_keywords_name_the_nearest_too(call, near):
    with pytest.raises(UnknownOptionError, match=f"unknown parameter '[a-z_]+'; did you mean {near}"):
        call()


@pytest.mark.parametrize("call", [
    lambda: Synthesizer(epsilon=1).set_params(roundz=3),
    lambda: SynthesisConfig.of(epsilon=1, roundz=3),
])
def test_an_unknown_option_is_refused_with_the_nearest_names_before_anything_is_read(call):
    with pytest.raises(InputError, match=r"unknown parameter 'roundz'; did you mean 'rounds'"):
        call()


def test_a_far_unknown_option_lists_the_valid_ones():
    with pytest.raises(InputError, match=r"unknown parameter 'zzz'; valid options: epsilon, delta, "):
        SynthesisConfig.of(epsilon=1, zzz=1)


def _generate_actions() -> dict[str, object]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["generate"]
    return {s: a for a in sub._actions for s in a.option_strings}


def test_every_option_has_a_flag_or_a_stated_reason():
    flags = _generate_actions()
    hand_written = {**cli.GENERATE_FLAGS, **cli.SCHEMA_FLAGS}
    for f in FIELDS:
        derived = "--" + f.name.replace("_", "-")
        if f.name in cli.API_ONLY:
            assert len(cli.API_ONLY[f.name]) > 20 and derived not in flags, f.name
        elif f.name in hand_written:
            names, _ = hand_written[f.name]
            assert all(n in flags for n in names), f.name
            action = flags[names[-1]]
            if f.name != "progress":  # --quiet: the inverted switch
                assert _flat(option_doc(f.name, PLAN_DEFAULTS)) in _flat(action.help.replace("%%", "%")) \
                    and action.default == f.default
        else:
            action = flags[derived]
            assert action.dest == f.name
            assert action.help.replace("%%", "%").startswith(option_doc(f.name, PLAN_DEFAULTS)), f.name
            assert action.choices == RULES[f.name].choices, f.name
            assert action.required == (f.default is dataclasses.MISSING), f.name
            if not action.required:
                assert action.default == f.default, f.name
    assert not set(cli.API_ONLY) & set(hand_written)


def _changed(name: str) -> tuple[list[str], object]:
    """A command-line setting of derived option ``name`` other than its default, and the value it must give."""
    field, kind = SynthesisConfig.__dataclass_fields__[name], cli.scalar_type(name)
    flag = "--" + name.replace("_", "-")
    if kind is bool:
        return [flag], True
    if RULES[name].choices:
        value = next(c for c in RULES[name].choices if c != field.default)
        return [flag, value], value
    value = {int: 7, float: 0.5, str: "x"}[kind]
    return [flag, str(value)], value


def test_every_derived_flag_reaches_its_option():
    parser = cli.build_parser()
    base = ["generate", "in.csv", "-o", "out.csv", "--epsilon", "1"]
    defaults = generate_options(parser.parse_args(base))
    for name in cli.derived_names(list(GROUPS)):
        if name == "epsilon":
            continue
        argv, value = _changed(name)
        options = generate_options(parser.parse_args([*base, *argv]))
        assert options[name] == value, name
        assert {k: v for k, v in options.items() if k != name} == {k: v for k, v in defaults.items() if k != name}
    # every option but the API-only ones and --missing (which the CSV reader applies) reaches the config
    expected = {**SynthesisConfig.defaults(), "epsilon": 1.0}
    assert defaults == {k: v for k, v in expected.items() if k not in (*cli.API_ONLY, "missing")}


@pytest.mark.parametrize("options, message", [
    (dict(epsilon=101), r"epsilon must be at most 100, got 101"),
    (dict(epsilon=1, delta=2e-3), "above 0.001, the most synthdp accepts under add-remove"),
    (dict(epsilon=1, privacy_unit="pid"), "needs max_rows_per_unit"),
    (dict(epsilon=1, privacy_unit="pid", max_rows_per_unit=10_001), r"integer in 1\.\.10,000"),
    (dict(epsilon=1, privacy_unit="pid", max_rows_per_unit=2, relation="replace-one"), "needs relation='add-remove'"),
    (dict(epsilon=1, rounds=5, epsilon_per_round=0.1), "not both"),
])
def test_a_budget_or_unit_out_of_range_is_refused_where_it_is_given(options, message):
    """The config refuses it on construction: Synthesizer.fit, the function and the CLI before reading."""
    for make in (lambda: SynthesisConfig.of(**options), lambda: Synthesizer(**options).fit("no-such-file.csv"),
                 lambda: generate_synthetic("no-such-file.csv", **options)):
        with pytest.raises(InputError, match=message):
            make()


@pytest.mark.parametrize("flags, message", [(["--epsilon", "101"], "epsilon must be"),
                                            (["--epsilon", "1", "--delta", "0.01"], "above 0.001")])
def test_the_cli_refuses_a_budget_before_reading_and_writes_nothing(tmp_path, capsys, flags, message):
    out = tmp_path / "out.csv"
    assert main(["generate", str(tmp_path / "no-such-file.csv"), "-o", str(out), *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and "no-such-file" not in err and not out.exists()


def test_every_hand_written_flag_reaches_its_option():
    parser = cli.build_parser()
    args = parser.parse_args(["generate", "in.csv", "-o", "out.csv", "--epsilon", "1", "--queries", "conjunctions",
                              "--seed", "5", "--quiet", "--method", "game", "--privacy-unit", "pid",
                              "--max-rows-per-unit", "auto", "--categorical", "a", "b", "--bounds", "x=0:9",
                              "--bins", "x=3", "--cuts", "y=1,2", "--datetime", "d=%Y", "--learn-bounds", "z=int64",
                              "--decimals", "y=2", "--dtype", "a=str", "--nullable", "a", "--derived", "year=d.year", "net=x - y",
                              "--no-point-masses", "--measure-option", "rounds_per_attribute=4", "cover_share=1/2",
                              "--measure-option", "max_rounds=none"])
    options = generate_options(args)
    assert {k: options[k] for k in cli.GENERATE_FLAGS} == dict(
        query_class="conjunctions", random_state=5, progress=False, max_rows_per_unit="auto", point_masses=False,
        measure_options=MeasureOptions(rounds_per_attribute=4, cover_share=Fraction(1, 2), max_rounds=None))
    assert options["method"] == "game"
    assert {k: options[k] for k in cli.SCHEMA_FLAGS if k not in ("schema", "missing")} == dict(
        categorical=["a", "b"], bounds={"x": (0, 9)}, bins={"x": 3}, cuts={"y": [1.0, 2.0]}, datetimes={"d": "%Y"},
        learn_bounds={"z": "int64"}, decimals={"y": 2}, dtypes={"a": "str"}, nullable=["a"], derived={"year": "d.year", "net": "x - y"})
    assert SynthesisConfig.of(**options).random_state == 5
