"""Tables of results for Jupyter (HTML) and pandas, shared by league results and Elo ratings."""
from __future__ import annotations

import html
import math
from typing import Any, List, Optional, Sequence


def html_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], caption: Optional[str] = None,
               index: Optional[Sequence[str]] = None) -> str:
    """A plain HTML table (every cell escaped; floats with one decimal, NaN and None empty)."""

    def cell(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return ""
        if isinstance(v, float):
            return f"{v:.1f}" if abs(v) >= 10 else f"{v:.3f}"
        return html.escape(str(v))

    out: List[str] = ["<table>"]
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    head = ([""] if index is not None else []) + list(columns)
    out.append("<thead><tr>" + "".join(f"<th>{html.escape(str(c))}</th>" for c in head) + "</tr></thead><tbody>")
    for k, row in enumerate(rows):
        lead = f"<th>{html.escape(str(index[k]))}</th>" if index is not None else ""
        out.append("<tr>" + lead + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def pandas():
    """The pandas module, or ImportError saying how to get it (pandas is optional for mavgame)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_pandas() needs pandas: pip install pandas (mavgame itself runs without it)") from None
    return pd
