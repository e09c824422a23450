"""Compare encoding families on the same axes: similarity, distinguishability, extrapolation."""

import numpy as np
import pandas as pd
import streamlit as st

from posviz.analysis import families as fam
from posviz.charts.families import lines_chart
from posviz.encodings.alibi import alibi_slopes
from posviz.encodings.rope import rope_frequencies, rope_kernel
from posviz.encodings.sinusoidal import sinusoid_frequencies
from posviz.ui import (
    show_chart,
    url_multiselect,
    url_number,
    url_select,
    url_slider,
    url_text,
    user_errors,
)
from posviz.ui.families import bundled_table, cached_margin, cached_t5_bias, cached_table_margin

FAMILIES = ["Sinusoid", "Learned (MiniLM)", "RoPE", "RoPE + scaling", "ALiBi", "T5"]
MAX_MARGIN_ITEMS = 2048

st.title("Compare families")
st.markdown(
    "Every family gives the model a signal for a position (sinusoid, learned: a vector added to "
    "the token) or for a distance (RoPE: rotation angles; ALiBi: a logit penalty; T5: a bucket). "
    "Here they are reduced to the same three questions, over the same distances, with a trained "
    "length *L* marked: how similar is distance *k* to distance 0; can neighbouring positions be "
    "told apart; and how much of the signal beyond *L* was never seen in training."
)

chosen = url_multiselect(
    "Families",
    FAMILIES,
    key="cmp_fam",
    default=["Sinusoid", "Learned (MiniLM)", "RoPE", "RoPE + scaling", "ALiBi", "T5"],
)
with st.expander("Settings", expanded=False):
    c1, c2, c3 = st.columns(3)
    with c1:
        trained = url_slider(
            "Trained length L", key="cmp_L", min_value=16, max_value=4096, default=512, step=16
        )
        n = url_slider(
            "Distances / positions shown",
            key="cmp_n",
            min_value=32,
            max_value=4096,
            default=1536,
            step=32,
        )
        d_sin = url_slider(
            "Sinusoid width d", key="cmp_dsin", min_value=8, max_value=1024, default=384, step=8
        )
    with c2:
        head_dim = url_slider(
            "RoPE head dim", key="cmp_hd", min_value=8, max_value=256, default=64, step=8
        )
        base = url_number(
            "RoPE base", key="cmp_base", min_value=2.0, max_value=1e9, default=10000.0, step=1000.0
        )
        scaling = url_select(
            "RoPE scaling", ["linear", "dynamic", "yarn", "llama3"], key="cmp_scal", default="yarn"
        )
        factor = url_number(
            "Scaling factor", key="cmp_fac", min_value=1.0, max_value=64.0, default=4.0, step=1.0
        )
    with c3:
        heads = url_number(
            "ALiBi heads", key="cmp_heads", min_value=0, max_value=10_000, default=8, step=1
        )
        buckets = url_number(
            "T5 buckets", key="cmp_nb", min_value=0, max_value=1024, default=32, step=2
        )
        max_distance = url_number(
            "T5 max_distance", key="cmp_md", min_value=0, max_value=100_000, default=128, step=8
        )
        t5_model = url_text(
            "T5 model for its learned bias (optional)",
            key="cmp_t5",
            default="",
            placeholder="google-t5/t5-small",
        ).strip()

k = np.arange(n)
similarity: dict[str, np.ndarray] = {}
margin: dict[str, np.ndarray] = {}
unseen: dict[str, np.ndarray] = {}
facts: list[dict[str, str]] = []
m = min(n, MAX_MARGIN_ITEMS)


def fact(name: str, kind: str, where: str, beyond: str) -> None:
    facts.append({"family": name, "signal for": kind, "acts on": where, "beyond L": beyond})


if "Sinusoid" in chosen:
    with user_errors("Sinusoid"):
        omega = sinusoid_frequencies(d_sin)
        similarity["Sinusoid"] = rope_kernel(k, omega)  # = mean cos(PE_p, PE_p+k), exactly
        margin["Sinusoid"] = cached_margin("angles", m, tuple(omega))
        unseen["Sinusoid"] = fam.unseen_angle_fraction(n, omega, trained_length=trained)
        fact("Sinusoid", "position p", "added to the input", "defined; slow dims unseen")
if "Learned (MiniLM)" in chosen:
    with user_errors("Learned table"):
        table = bundled_table()
        similarity["Learned (MiniLM)"] = fam.table_similarity(table.matrix, n)
        margin["Learned (MiniLM)"] = cached_table_margin("bundled", min(m, table.n_positions))
        unseen["Learned (MiniLM)"] = fam.beyond_length(n, trained_length=table.n_positions)
        fact(
            "Learned (MiniLM)",
            "position p",
            "added to the input",
            f"no row past {table.n_positions}",
        )
rope = None
if "RoPE" in chosen or "RoPE + scaling" in chosen:
    with user_errors("RoPE"):
        params = {
            "rope_type": scaling,
            "factor": factor,
            "original_max_position_embeddings": trained,
        }
        if scaling == "llama3":
            params |= {"low_freq_factor": 1.0, "high_freq_factor": 4.0}
        rope = rope_frequencies(
            head_dim, base=base, scaling=params, max_position_embeddings=trained, seq_len=n
        )
if rope is not None and "RoPE" in chosen:
    similarity["RoPE"] = rope_kernel(k, rope.original_inv_freq)
    margin["RoPE"] = cached_margin("angles", m, tuple(rope.original_inv_freq))
    unseen["RoPE"] = fam.unseen_angle_fraction(n, rope.original_inv_freq, trained_length=trained)
    fact("RoPE", "distance k", "rotates q and k", "defined; slow pairs unseen")
label = f"RoPE + {scaling} ×{factor:g}"
if rope is not None and "RoPE + scaling" in chosen:
    similarity[label] = rope_kernel(k, rope.inv_freq)
    margin[label] = cached_margin("angles", m, tuple(rope.inv_freq))
    unseen[label] = fam.unseen_angle_fraction(
        n, rope.inv_freq, trained_length=trained, trained_inv_freq=rope.original_inv_freq
    )
    fact(label, "distance k", "rotates q and k", f"angles kept inside training up to ~{factor:g}·L")
if "ALiBi" in chosen:
    with user_errors("ALiBi"):
        slopes = alibi_slopes(heads)
        similarity[f"ALiBi ({heads} heads)"] = fam.alibi_similarity(n, slopes)
        unseen[f"ALiBi ({heads} heads)"] = fam.beyond_length(n, trained_length=trained)
        fact(
            f"ALiBi ({heads} heads)",
            "distance k",
            "logit bias −m·k",
            "larger penalties than seen; far keys only weaker",
        )
if "T5" in chosen:
    with user_errors("T5"):
        kw = {"num_buckets": buckets, "max_distance": max_distance}
        margin["T5 buckets"] = cached_margin("buckets", m, (buckets, max_distance))
        unseen["T5 buckets"] = fam.unseen_bucket_fraction(n, trained_length=trained, **kw)
        fact(
            "T5 buckets",
            "distance k (bucketed)",
            "learned logit bias per bucket",
            "last bucket shared: nothing new",
        )
        if t5_model:
            bias = cached_t5_bias(t5_model, "encoder")
            similarity[f"T5 ({t5_model})"] = fam.t5_similarity(n, bias, max_distance=max_distance)

if not chosen:
    st.info("Pick at least one family.")
    st.stop()

st.header("1 · Similarity vs relative distance")
st.markdown(
    "Sinusoid and learned: mean cosine of the vectors at *p* and *p + k*. RoPE: cosine between a "
    "vector rotated to *p* and to *p + k* — the same kernel as the sinusoid for the same "
    "frequencies. ALiBi (and T5 with a model): the factor its bias multiplies a key's attention "
    "weight by, *k* tokens back, averaged over heads. All are 1 at *k* = 0. "
    + (
        "T5 without a model has no fixed shape (its biases are learned); name a T5 model in the "
        "settings to add it."
        if "T5" in chosen and not t5_model
        else ""
    )
)
if similarity:
    show_chart(
        lines_chart(
            k,
            similarity,
            x_title="distance k (tokens)",
            y_title="similarity to k = 0",
            rule_x=trained,
            rule_label=f"L = {trained}",
            log_x=True,
        ),
        key="cmp_sim_chart",
        data=np.column_stack([k, *similarity.values()]),
        name="compare_similarity",
    )

st.header("2 · Distinguishability")
st.markdown(
    f"For each of the first {m} positions/distances: 1 − the highest cosine with any *other* one "
    "in the window. 0 means some other position looks identical to the model's signal. T5's "
    "wide buckets give 0 (all distances in a bucket are one signal). Scaling RoPE lowers its "
    "margin — interpolated pairs turn more slowly, so neighbours crowd together (a little for "
    "YaRN/llama3, which keep the fast pairs; most for linear). ALiBi's signal is one number per "
    "head, −m_h·k, so a cosine does not apply: neighbouring distances always differ by exactly "
    "m_h in the logit."
)
if margin:
    mk = np.arange(m)
    padded = {
        name: np.pad(v, (0, m - v.size), constant_values=np.nan) for name, v in margin.items()
    }
    show_chart(
        lines_chart(
            mk,
            padded,
            x_title="position / distance",
            y_title="nearest-other margin (symlog)",
            y_scale="symlog",
            rule_x=trained if trained < m else None,
            rule_label=f"L = {trained}",
            log_x=True,
        ),
        key="cmp_margin_chart",
        data=np.column_stack([mk, *padded.values()]),
        name="compare_margin",
    )

st.header("3 · Beyond the trained length")
st.markdown(
    "Fraction of the signal at *k* that training up to *L* never produced. Sinusoid/RoPE: share of "
    "frequency pairs whose angle lies outside the arc they covered in training (fast pairs turned "
    "full circles and are always familiar; slow ones were not). The learned table simply ends. "
    "ALiBi's penalties grow past anything seen, yet only make far keys weaker — Press et al. show "
    "it extrapolates. T5's last bucket covers every distance beyond max_distance."
)
if unseen:
    show_chart(
        lines_chart(
            k,
            unseen,
            x_title="distance / position k",
            y_title="unseen fraction",
            rule_x=trained,
            rule_label=f"L = {trained}",
            y_domain=(0, 1.02),
        ),
        key="cmp_unseen_chart",
        data=np.column_stack([k, *unseen.values()]),
        name="compare_unseen",
    )

if facts:
    at_2l = min(2 * trained, n - 1)
    for row in facts:
        name = row["family"]
        row[f"similarity at L={trained}"] = (
            f"{similarity[name][min(trained, n - 1)]:.3f}"
            if name in similarity and np.isfinite(similarity[name][min(trained, n - 1)])
            else "—"
        )
        row["mean margin"] = f"{np.nanmean(margin[name]):.4f}" if name in margin else "—"
        row[f"unseen at k={at_2l}"] = f"{unseen[name][at_2l]:.2f}" if name in unseen else "—"
    summary = pd.DataFrame(facts)
    numbers = [c for c in summary.columns if c not in ("signal for", "acts on", "beyond L")]
    st.markdown("**Summary** (numbers from the charts above)")
    st.dataframe(summary[[*numbers, "signal for", "acts on", "beyond L"]], hide_index=True)
