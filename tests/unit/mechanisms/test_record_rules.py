"""The rules of a record's version: one object, one scope, one reading of what a record states."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from securedp import Session
from securedp.mechanisms.record_rules import (
    EARLIER_ZCDP_CONVERSION,
    EIGHTH_ZCDP_CONVERSION,
    EXPONENTIAL,
    PERMUTE_AND_FLIP,
    ZCDP_CONVERSION,
    RecordRules,
    current_rules,
    rules_scope,
)


def test_the_defaults_are_this_versions_rules() -> None:
    assert current_rules() == RecordRules() == RecordRules(ZCDP_CONVERSION, False, PERMUTE_AND_FLIP, True, False)


@pytest.mark.parametrize(("field", "value"), [("conversion", "epsilon**2/4"), ("conversion", None),
                                              ("quantile_draw", "noisy_max"), ("quantile_draw", "")])
def test_an_unknown_rule_is_refused(field: str, value: object) -> None:
    with pytest.raises(ValueError, match="unknown"):
        RecordRules(**{field: value})


def test_a_scope_nests_and_restores_even_on_an_error() -> None:
    eighth = RecordRules(conversion=EIGHTH_ZCDP_CONVERSION)
    with pytest.raises(RuntimeError), rules_scope(eighth):
        assert current_rules() is eighth
        with rules_scope(RecordRules(quantile_draw=EXPONENTIAL)):
            assert current_rules() == RecordRules(quantile_draw=EXPONENTIAL)
        assert current_rules() is eighth
        raise RuntimeError
    assert current_rules() == RecordRules()


def test_the_record_states_each_rule_anywhere_in_its_parameters() -> None:
    cell = {"selection": PERMUTE_AND_FLIP, "conversion": EARLIER_ZCDP_CONVERSION}
    stated = RecordRules.stated({"shares": {}, "selection": "count", "delta": "1/1000000", "x_median": cell})
    assert stated == RecordRules(conversion=EARLIER_ZCDP_CONVERSION, charges_asked_delta=True,
                                 quantile_draw=PERMUTE_AND_FLIP, tie_margin=False)  # no tie_margin stated: c = 0
    proven = RecordRules.stated({"delta": "1/2000000", "delta_asked": "1/1000000", "x": {"selection": "exponential"}})
    # no permute-and-flip stated: drawn by the earlier rule
    assert proven == RecordRules(quantile_draw=EXPONENTIAL, tie_margin=False)
    assert RecordRules.stated([{"x": {"conversion": EIGHTH_ZCDP_CONVERSION}}]).conversion == EIGHTH_ZCDP_CONVERSION
    margin = RecordRules.stated({"shares": {}, "x_median": {"selection": PERMUTE_AND_FLIP, "tie_margin": 18}})
    assert margin == RecordRules()  # this version's record: every rule of this version, the tie margin included
    assert RecordRules.stated([{"cells": [{"tie_margin": 3}]}]).tie_margin


@pytest.mark.parametrize("parameters", [None, "forged", 7, [], {}, {"conversion": "epsilon**2/4"},
                                        {"x": {"selection": ["permute_and_flip"]}}])
def test_a_record_stating_nothing_known_runs_by_this_versions_rules_every_selection_exponential_no_margin(
        parameters: object) -> None:
    assert RecordRules.stated(parameters) == RecordRules(quantile_draw=EXPONENTIAL, tie_margin=False)


def test_a_rho_session_sets_its_pricing_choice_and_keeps_the_version_rules_in_force() -> None:
    seen: list[RecordRules] = []

    def prepare() -> None:
        seen.append(current_rules())
        raise ValueError("stop")

    earlier = RecordRules(conversion=EIGHTH_ZCDP_CONVERSION, charges_asked_delta=True)
    with rules_scope(earlier):
        for session in (Session(rho=1), Session(epsilon=1)):
            with pytest.raises(ValueError, match="stop"):
                session.prepare(prepare)
    assert seen == [dataclasses.replace(earlier, rho_budget=True), earlier]
    assert current_rules() == RecordRules()
    released = Session(rho=10).median(np.arange(100), bounds=(0, 100), epsilon=2)
    assert released.mechanism == EXPONENTIAL and current_rules().rho_budget is False
