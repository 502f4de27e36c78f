"""Exact numbers. Parameter parsing to rationals, and rigorous bounds on irrationals."""

from securedp.hazmat.exact.interval import Interval, Real, exp_neg, logistic_neg
from securedp.hazmat.exact.rational import (
    Rational,
    format_rational,
    nonnegative_rational,
    positive_rational,
    probability,
    to_int,
    to_mpq,
    to_rational,
)

__all__ = [
    "Interval", "Rational", "Real", "exp_neg", "format_rational", "logistic_neg", "nonnegative_rational",
    "positive_rational", "probability", "to_int", "to_mpq", "to_rational",
]
