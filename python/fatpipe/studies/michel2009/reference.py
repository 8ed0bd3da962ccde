"""The dissertation's numbers (CSV files in ``studies/michel2009/reference``) and protocol names.

The paper names protocols BIC, CUBIC, FAST, HSTCP, HTCP, LIBRA, STCP and RENO; fatpipe's
congestion controls are ``bic``, ``cubic``, ``fast``, ``highspeed`` (alias ``hstcp``), ``htcp``,
``libra``, ``scalable`` and ``reno``. Everything in this package that faces the paper uses the
paper's names; :func:`protocol_of` converts either spelling.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PROTOCOLS", "HIGH_SPEED", "PAPER_TO_CC", "protocol_of", "cc_of", "reference_dir", "load",
           "SYMBOLS", "GRADES"]

#: The seven high-speed protocols, in the paper's table order.
HIGH_SPEED: tuple[str, ...] = ("BIC", "CUBIC", "FAST", "HSTCP", "HTCP", "LIBRA", "STCP")
#: The high-speed protocols and the baseline.
PROTOCOLS: tuple[str, ...] = HIGH_SPEED + ("RENO",)
PAPER_TO_CC: dict[str, str] = {
    "BIC": "bic", "CUBIC": "cubic", "FAST": "fast", "HSTCP": "highspeed", "HTCP": "htcp",
    "LIBRA": "libra", "STCP": "scalable", "RENO": "reno",
}
# fatpipe aliases (``fatpipe algorithms``): hstcp is highspeed. newreno counts as the Reno
# baseline, as fatpipe.experiments.run_metrics' reno_share already does.
_CC_TO_PAPER = {v: k for k, v in PAPER_TO_CC.items()} | {"hstcp": "HSTCP", "newreno": "RENO"}

#: Rating grades, best first, as words (the CSV coding) and as the paper's symbols (Table 4.6;
#: ◆ as in Tables 4.7/4.8 and the text, not Table 4.6's ◇, erratum 11).
GRADES: tuple[str, ...] = ("very_good", "good", "regular", "poor")
SYMBOLS: dict[str, str] = {"very_good": "★★", "good": "★", "regular": "◆", "poor": "■", "undefined": "undefined"}


def protocol_of(name: str) -> str:
    """The paper's name of a protocol given either spelling (``"highspeed"`` -> ``"HSTCP"``)."""
    s = str(name).strip()
    if s.upper() in PAPER_TO_CC:
        return s.upper()
    try:
        return _CC_TO_PAPER[s.lower()]
    except KeyError:
        raise ValueError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOLS)} or fatpipe names "
                         f"{', '.join(sorted(_CC_TO_PAPER))}") from None


def cc_of(protocol: str) -> str:
    """fatpipe's congestion-control name of a paper protocol (``"STCP"`` -> ``"scalable"``)."""
    return PAPER_TO_CC[protocol_of(protocol)]


def reference_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """``studies/michel2009/reference`` (of ``override``'s studies root, else the repository's)."""
    from fatpipe.studies.study import studies_dir

    return studies_dir(override) / "michel2009" / "reference"


def load(table: str, root: str | os.PathLike[str] | None = None) -> "pd.DataFrame":
    """One reference table by file stem, e.g. ``load("table4_2_rtt_fairness")``.

    Values stay in the paper's units (%, pp, Mbit/s; see the folder's README.md). ``mark`` of
    Table 4.3 reads as an empty string where the table has none.
    """
    import pandas as pd

    path = reference_dir(root) / f"{table}.csv"
    if not path.is_file():
        raise FileNotFoundError(f"no reference table {path}")
    df = pd.read_csv(path)
    if "mark" in df:
        df["mark"] = df["mark"].fillna("").astype(str)
    return df
