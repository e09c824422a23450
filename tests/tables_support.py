"""What the learned-table tests share.

from tables_support import ISSUE_FAMILIES
"""

from __future__ import annotations

#: the model families whose learned position tables the issue asks for: every one is in the
#: registry (``tests/test_tables_local.py``) and loads from a loopback hub, equal to the model's
#: own parameter and within the byte budget (``tests/test_tables_hub.py``)
ISSUE_FAMILIES = (
    "bert",
    "distilbert",
    "electra",
    "albert",
    "roberta",
    "xlm-roberta",
    "gpt2",
    "gpt_neo",
    "opt",
    "bart",
    "vit",
)
