"""The report's plots: inline SVG with numbered axes and labelled markers (rendered by :mod:`securedp.audit.report`).

Every plot has numbered ticks on both axes and every marker (a dashed line: a ledger's total, the
half-width of a noise law) carries a text label with its number, linked by the marker's
``data-label`` to the label's ``id``. The *numbers written* are exact: a tick's value is a
multiple of ``1``, ``2`` or ``5`` times a power of ten, written in full or as ``Me<k>`` (exactly
``M * 10**k``), and a marker's label is the record's exact rational. Only the *coordinates* are
floats, computed from exact rationals as fractions of the axis (so a ``scale_units`` of ``10**400``
draws like any other and never overflows a float).
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

__all__ = ["Axis", "Plot", "exact_number", "magnitude", "nice_ticks"]

_FONT = 11
_CHAR = 7.4  # for layout: above one character's width at 11 px in common sans-serif fonts (DejaVu digits: 7.0)
_GAP = 14  # the least vertical distance between two labels in one margin
_X_TICKS = 18  # the x ticks' labels' baseline below the plot: clear of the lowest y tick's label beside it, when the
# first x tick sits on the y axis


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _pow10(k: int) -> Fraction:
    return Fraction(10) ** k


def exact_number(value: Fraction) -> str:
    """``value`` (a tick: a decimal fraction) written exactly and briefly: ``12``, ``0.25``, ``2.5e399``, ``-1e-9``."""
    if value == 0:
        return "0"
    sign, magnitude = ("-" if value < 0 else ""), abs(value)
    exponent = 0
    while magnitude.denominator != 1:  # a tick's denominator divides a power of ten: scale it away
        magnitude *= 10
        exponent -= 1
    digits = magnitude.numerator
    while digits % 10 == 0:
        digits //= 10
        exponent += 1
    text = str(digits)
    if exponent >= 0 and len(text) + exponent <= 7:
        return sign + text + "0" * exponent
    if -6 <= exponent < 0 and len(text) <= 7:
        whole = text.rjust(-exponent + 1, "0")
        return f"{sign}{whole[:exponent]}.{whole[exponent:]}"
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{sign}{mantissa}e{exponent + len(text) - 1}"


def magnitude(value: Fraction) -> int:
    """The ``k`` with ``10**k <= value < 10**(k + 1)``, for ``value > 0`` (exactly, without floats)."""
    k = len(str(value.numerator)) - len(str(value.denominator))
    while _pow10(k) > value:
        k -= 1
    while _pow10(k + 1) <= value:
        k += 1
    return k


def nice_ticks(lo: Fraction, hi: Fraction, most: int = 6, integers: bool = False) -> list[Fraction]:
    """Ticks from ``lo`` to ``hi`` (both inside the range) a step of ``1``, ``2`` or ``5`` times a power of ten apart.

    At most ``most`` intervals; with ``integers`` the step is at least 1. An empty range gives its one point.
    """
    if hi <= lo:
        return [lo]
    span = hi - lo
    k = magnitude(span / most)
    step = next(m * _pow10(k) for m in (1, 2, 5, 10) if span / (m * _pow10(k)) <= most)
    if integers and step < 1:
        step = Fraction(1)
    first = -((-lo) // step) * step  # the least multiple of step >= lo
    return [first + i * step for i in range(int((hi - first) // step) + 1)]


@dataclass(frozen=True)
class Axis:
    """One axis: its exact range, its label, and whether its ticks must be whole numbers."""

    lo: Fraction
    hi: Fraction
    label: str
    integers: bool = False

    def fraction(self, value: Fraction) -> float:
        """Where ``value`` lies along the axis, from 0 (``lo``) to 1 (``hi``), as a float for drawing."""
        return 0.0 if self.hi == self.lo else float((value - self.lo) / (self.hi - self.lo))

    def ticks(self) -> list[Fraction]:
        return nice_ticks(self.lo, self.hi, integers=self.integers)


@dataclass
class Plot:
    """An SVG plot being drawn: axes, marks in data coordinates, labelled markers and a legend.

    ``ids`` numbers the labels of the whole page, so that every ``id`` is unique.
    """

    x: Axis
    y: Axis
    ids: Iterator[int]
    width: int = 560
    height: int = 200
    marks: list[str] = field(default_factory=list)
    _right: list[tuple[float, str, str, str]] = field(default_factory=list)  # (y, text, colour, marker id)
    _top: list[tuple[float, str, str]] = field(default_factory=list)  # (x, text, marker id)
    legend: list[tuple[str, str]] = field(default_factory=list)

    def px(self, value: Fraction) -> float:
        return self.x.fraction(value) * self.width

    def py(self, value: Fraction) -> float:
        return (1 - self.y.fraction(value)) * self.height

    def points(self, points: Sequence[tuple[Fraction, Fraction]], colour: str, titles: Sequence[str]) -> None:
        """A polyline through ``points`` with a dot (titled with its exact value) at each."""
        xy = [(self.px(x), self.py(y)) for x, y in points]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
        self.marks.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>')
        self.marks += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"><title>{_e(t)}</title></circle>'
                       for (x, y), t in zip(xy, titles, strict=True)]

    def bars(self, xs: Sequence[Fraction], heights: Sequence[float], colour: str) -> None:
        """Bars at ``xs`` of the float ``heights`` (in the y axis' scale, for drawing only)."""
        width = max(1.0, self.width / max(len(xs), 1) - 1)
        top = float(self.y.hi) or 1.0
        for x, h in zip(xs, heights, strict=True):
            y = (1 - min(h / top, 1.0)) * self.height
            self.marks.append(f'<rect x="{self.px(x) - width / 2:.1f}" y="{y:.1f}" width="{width:.1f}" '
                              f'height="{self.height - y:.1f}" fill="{colour}"/>')

    def horizontal(self, y: Fraction, colour: str, label: str) -> None:
        """A dashed line across the plot at ``y``, labelled ``label`` in the right margin."""
        marker = next(self.ids)
        self.marks.append(f'<line class="marker" data-label="label-{marker}" x1="0" x2="{self.width}" '
                          f'y1="{self.py(y):.1f}" y2="{self.py(y):.1f}" stroke="{colour}" stroke-dasharray="4 3"/>')
        self._right.append((self.py(y), label, colour, f"label-{marker}"))

    def vertical(self, x: Fraction, colour: str, label: str) -> None:
        """A dashed line up the plot at ``x``, labelled ``label`` above it."""
        marker = next(self.ids)
        self.marks.append(f'<line class="marker" data-label="label-{marker}" x1="{self.px(x):.1f}" '
                          f'x2="{self.px(x):.1f}" y1="0" y2="{self.height}" stroke="{colour}" '
                          'stroke-dasharray="5 3"/>')
        self._top.append((self.px(x), label, f"label-{marker}"))

    def svg(self, title: str, description: str) -> str:
        """The finished ``<svg>``: marks, numbered axes, marker labels and legend, with title and description."""
        x_ticks, y_ticks = self.x.ticks(), self.y.ticks()
        y_texts = [exact_number(t) for t in y_ticks]
        left = int(28 + _CHAR * max(len(t) for t in y_texts))
        right = int(12 + _CHAR * max((len(text) for _, text, _, _ in self._right), default=0))
        last = max((self.px(t) + _CHAR * len(exact_number(t)) / 2 - self.width for t in x_ticks), default=0)
        right = max(right, int(6 + last))  # the last x tick's label is centred on its tick: room for its half
        top = 22 if self._top else 10
        bottom = 48 + _GAP * len(self.legend)
        body = [f'<g transform="translate({left},{top})">', *self.marks,
                f'<line x1="0" y1="{self.height}" x2="{self.width}" y2="{self.height}" stroke="#555"/>',
                f'<line x1="0" y1="0" x2="0" y2="{self.height}" stroke="#555"/>']
        body.append('<g class="x-ticks">' + "".join(
            f'<line x1="{self.px(t):.1f}" x2="{self.px(t):.1f}" y1="{self.height}" y2="{self.height + 4}" '
            f'stroke="#555"/><text x="{self.px(t):.1f}" y="{self.height + _X_TICKS}" font-size="{_FONT}" '
            f'text-anchor="middle">{_e(exact_number(t))}</text>' for t in x_ticks) + "</g>")
        body.append('<g class="y-ticks">' + "".join(
            f'<line x1="-4" x2="0" y1="{self.py(t):.1f}" y2="{self.py(t):.1f}" stroke="#555"/>'
            f'<text x="-7" y="{self.py(t) + 4:.1f}" font-size="{_FONT}" text-anchor="end">{_e(text)}</text>'
            for t, text in zip(y_ticks, y_texts, strict=True)) + "</g>")
        body.append(f'<text x="{self.width / 2:.0f}" y="{self.height + _X_TICKS + 16}" font-size="12" '
                    f'text-anchor="middle">{_e(self.x.label)}</text>')
        middle = self.height / 2
        body.append(f'<text x="{12 - left}" y="{middle:.0f}" font-size="12" text-anchor="middle" '
                    f'transform="rotate(-90 {12 - left} {middle:.0f})">{_e(self.y.label)}</text>')
        for (_, text, colour, ident), placed in zip(self._right, _spread([y for y, *_ in self._right], self.height),
                                                    strict=True):
            body.append(f'<text id="{ident}" x="{self.width + 6}" y="{placed + 4:.1f}" font-size="{_FONT}" '
                        f'fill="{colour}">{_e(text)}</text>')
        for x, text, ident in self._top:
            body.append(f'<text id="{ident}" x="{x:.1f}" y="-6" font-size="{_FONT}" fill="#a4341f" '
                        f'text-anchor="middle">{_e(text)}</text>')
        for i, (text, colour) in enumerate(self.legend):
            y = self.height + _X_TICKS + 32 + _GAP * i
            body.append(f'<rect x="0" y="{y - 9}" width="10" height="10" fill="{colour}"/>'
                        f'<text x="16" y="{y}" font-size="{_FONT}">{_e(text)}</text>')
        body.append("</g>")
        width, height = left + self.width + right, top + self.height + bottom
        return (f'<svg role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
                f'xmlns="http://www.w3.org/2000/svg"><title>{_e(title)}</title><desc>{_e(description)}</desc>'
                + "".join(body) + "</svg>")


def _spread(ys: Sequence[float], height: float) -> list[float]:
    """``ys`` moved apart, in their order, so that labels at them are at least one line apart."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    placed = [0.0] * len(ys)
    floor = -float("inf")
    for i in order:
        placed[i] = max(ys[i], floor + _GAP)
        floor = placed[i]
    overflow = max((placed[i] - height for i in order), default=0.0)
    if overflow > 0:  # pushed below the plot: shift the whole stack up
        placed = [p - overflow for p in placed]
    return placed
