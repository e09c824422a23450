"""Hostile link values, shared by the unit tests of their parser (``tests/test_urlparams.py``),
the page tests (one representative bad link per page, ``tests/test_hostile_links.py``) and the
bad-input corpus (``tests/test_bad_inputs.py``)."""

from __future__ import annotations

#: the attacker's host in every hostile value; a link or image naming it came from the input.
HOST = "evil.example"

#: values for every kind of link parameter (number, choice, step, list, boolean, text).
HOSTILE: dict[str, str] = {
    "huge": "99999999999999999999999",
    "negative": "-7",
    "zero": "0",
    "nan": "nan",
    "overflow": "1e400",
    "tiny": "-1e308",
    "empty": "",
    "unicode": "ℵ₀😀\u202eمرحبا<script>alert(1)</script>\x00",
    "traversal": "../../etc/passwd",
    "long": "9" * 5000,
    "list": ",".join(["-1", "nan", "99999999", "x"] * 100),
    "unknown": "unknown-value",
    # one value per way user text becomes a link or an image
    "url": f"https://{HOST}/login",
    "www": f"www.{HOST}",
    "email": f"me@{HOST}",
    "md_link": f"[Log in again](https://{HOST})",
    "md_image": f"![p](https://{HOST}/px.png)",
    "html": f"<a href='https://{HOST}'>x</a><img src='https://{HOST}/x.png'>",
    "markup": (
        f"`[Log in again](https://{HOST}/login)` `![p](http://{HOST}/px.png)` "
        f"<img src=https://{HOST}/x.png onerror=alert(1)><a href='https://{HOST}'>x "
        f"ℵ₀😀\u202e:material/lock: :red[evil] $x$ www.{HOST} me@{HOST}"
    ),
    "long_link": f"`[x](https://{HOST})" + "A" * 10_000,
}

#: the one bad link each page gets (every parameter at once): not a number, a choice, a step, a
#: boolean or a list item, so each non-text parameter must say it ignored it; links and markup in
#: every form (a plain URL and a Markdown link within the first 60 characters, which a link
#: warning echoes), so an echo that is not escaped shows as a link.
REPRESENTATIVE = " ".join(
    ["nan", HOSTILE["url"], HOSTILE["md_link"], HOSTILE["markup"], HOSTILE["md_image"]]
)
