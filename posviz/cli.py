"""``python -m posviz``: the non-interactive parts of posviz from a shell.

Commands::

    python -m posviz info bundled
    python -m posviz export bundled -o minilm.npy          # also .csv (header) and .tsv (projector)
    python -m posviz export sinusoidal:512x768 -o pe.csv
    python -m posviz probe bundled sinusoidal:512x384 --protocol kfold
    python -m posviz lab list
    python -m posviz lab run learned --seeds 3 --json learned.json

``SOURCE`` is anything :func:`posviz.load_table` accepts (the grammar of
:mod:`posviz.tables.sources`): ``bundled`` (offline MiniLM), a hub model id
(``openai-community/gpt2``, with ``--revision``), a local model directory, a ``.safetensors`` or
``.npy`` file, ``sinusoidal:NxD[:layout]``, or ``lab:<run-id>[/<table>[/<seed>[/<step>]]]`` (a
table a lab run trained; ``python -m posviz lab list`` lists them).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from posviz import export
from posviz.analysis.probes import probe_summary
from posviz.lab.present.cli import add_lab_commands, run_lab_command
from posviz.tables import GRAMMAR, load_table

PROTOCOLS = {"even-odd": ("even", "odd"), "all": ("all", "all"), "kfold": ("kfold", "all")}
FORMATS = (".npy", ".csv", ".tsv")


def matrix_bytes(matrix: np.ndarray, suffix: str) -> bytes:
    """``(n_positions, d_model)`` as the bytes of a ``.npy`` (no pickle), ``.csv`` or ``.tsv`` file.

    The writers are :mod:`posviz.export`'s, with their download size limits lifted (a file on
    disk, not a browser download). CSV has a header ``position,dim_0,…`` and the position in the
    first column; TSV is the TensorFlow Embedding Projector's vectors file (no header).

    Raises:
        ValueError: unknown extension, or an array that is not numeric 2-D.
    """
    suffix = suffix.lower()
    if suffix == ".npy":
        return export.matrix_npy(matrix, max_bytes=None)
    if suffix == ".csv":
        return export.matrix_csv(matrix, max_cells=None)
    if suffix == ".tsv":
        return export.projector_vectors(matrix, max_cells=None)
    raise ValueError(f"Output suffix {suffix!r} must be one of {', '.join(FORMATS)}.")


def write_matrix(matrix: np.ndarray, path: Path) -> None:
    """Write ``(n_positions, d_model)`` to ``path`` (``.npy``, ``.csv`` or ``.tsv``).

    Raises:
        ValueError: unknown extension.
    """
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"Output {path.name!r} must end in {', '.join(FORMATS)}.")
    path.write_bytes(matrix_bytes(matrix, path.suffix))


def cmd_info(args: argparse.Namespace) -> int:
    """``info SOURCE``: shape, tensor, rows set aside and notes of one table."""
    table = load_table(args.source, revision=args.revision)
    print(f"source:      {table.source}")
    print(f"shape:       {table.n_positions} positions × {table.d_model} dimensions")
    print(f"kind:        {table.kind}")
    for label, value in (
        ("tensor:", table.tensor_name),
        ("model type:", table.model_type),
        ("revision:", table.revision),
    ):
        if value:
            print(f"{label:<12} {value}")
    print(f"bytes read:  {table.bytes_read:,}")
    for aside in table.set_aside:
        print(f"set aside:   stored rows {', '.join(map(str, aside.rows))} ({aside.reason})")
    for note in table.notes:
        print(f"note:        {note}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """``export SOURCE -o FILE``: write the table (refuses to overwrite without ``--force``)."""
    out = Path(args.output)
    if out.suffix.lower() not in FORMATS:
        raise ValueError(f"Output {out.name!r} must end in {', '.join(FORMATS)}.")
    if out.exists() and not args.force:
        raise ValueError(f"{out} exists; pass --force to overwrite it.")
    table = load_table(args.source, revision=args.revision)
    write_matrix(table.matrix, out)
    print(f"wrote {table.n_positions}×{table.d_model} table of {table.source} to {out}")
    return 0


def cmd_probe(args: argparse.Namespace) -> int:
    """``probe SOURCE…``: the linear position probes, one row per table."""

    tables = {}
    for source in args.sources:
        table = load_table(source, revision=args.revision)
        tables[table.label] = np.asarray(table.matrix, dtype=np.float64)
    train, test = PROTOCOLS[args.protocol]
    frame = probe_summary(
        tables,
        train=train,
        test=test,
        folds=args.folds,
        relative=not args.no_relative,
        seed=args.seed,
        alpha=args.alpha,
    )
    if args.format == "csv":
        print(frame.to_csv(index=False), end="")
    elif args.format == "json":
        print(frame.to_json(orient="records", indent=2))
    else:
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0


def inside_findings(result: object) -> dict[str, object]:
    """The Inside-real-models findings of one window length as plain JSON-able numbers
    (:func:`posviz.analysis.inside_models.findings`: head classes trained, shuffled, untrained
    and ablated, pooled and per window; positional heads; the moved content control; for RoPE,
    the weight-norm proxy's quarter shares)."""
    from posviz.analysis.inside_models import findings

    return findings(result)  # type: ignore[arg-type]


def cmd_inside(args: argparse.Namespace) -> int:
    """``inside MODEL``: the Inside-real-models findings (computed once, then the signed cache)."""
    import json

    from posviz.analysis.inside_models import CONDITIONS, check_window, inside_results

    window = check_window(args.window)
    found = inside_findings(inside_results(args.model, window=window))
    found["window"] = window  # the length it was computed and cached for
    if args.json:
        print(json.dumps(found, indent=1))
        return 0
    for condition in CONDITIONS:
        if condition in found:
            block = found[condition]
            what = f", {block['what']}" if "what" in block else ""
            print(f"{found['label']} ({condition}{what}, {window}-token windows): "
                  f"{block['pooled']}")  # fmt: skip
            if "positional_kept" in block:
                print(f"  positional heads that keep their distance: {block['positional_kept']}")
            elif "positional" in block:
                print(f"  positional heads: {block['positional']} (at distance: "
                      f"{block['positional_at']})")  # fmt: skip
    if "moved" in found:
        moved = found["moved"]
        print(f"moved control ({moved['what']}): {moved['on_slot_0']} heads on slot 0, "
              f"{moved['on_the_token']} on {moved['token']}")  # fmt: skip
    if "frequency_proxy" in found:
        print(f"frequency (weight-norm proxy): {found['frequency_proxy']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``python -m posviz --help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m posviz",
        description="Positional-encoding tables from the shell: inspect, export, probe.",
        epilog=f"SOURCE: {GRAMMAR}. Run `posviz-app` (or ./scripts/run-app.sh in a checkout) "
        "for the interactive app.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    info = sub.add_parser("info", help="describe a table: shape, tensor, rows set aside")
    info.add_argument("source", metavar="SOURCE")
    info.add_argument("--revision", help="hub revision (branch, tag or commit)")
    info.set_defaults(func=cmd_info)

    export = sub.add_parser("export", help="write a table to .npy, .csv or .tsv")
    export.add_argument("source", metavar="SOURCE")
    export.add_argument("-o", "--output", required=True, help="file ending in .npy, .csv or .tsv")
    export.add_argument("--revision", help="hub revision (branch, tag or commit)")
    export.add_argument("--force", action="store_true", help="overwrite an existing file")
    export.set_defaults(func=cmd_export)

    probe = sub.add_parser("probe", help="linear position probes; prints one row per table")
    probe.add_argument("sources", nargs="+", metavar="SOURCE")
    probe.add_argument(
        "--protocol",
        choices=list(PROTOCOLS),
        default="even-odd",
        help="even-odd: train even rows, test odd (Jexus blog); all: fit all rows; "
        "kfold: shuffled k-fold CV, rounded (Wang & Chen 2020). Default even-odd.",
    )
    probe.add_argument("--folds", type=int, default=5, help="folds for kfold and the order probe")
    probe.add_argument("--seed", type=int, default=0)
    probe.add_argument("--alpha", type=float, default=0.0, help="ridge penalty (0 = OLS)")
    probe.add_argument(
        "--no-relative", action="store_true", help="skip the relative-order (is j after i?) probe"
    )
    probe.add_argument("--revision", help="hub revision for hub sources")
    probe.add_argument("--format", choices=("table", "csv", "json"), default="table")
    probe.set_defaults(func=cmd_probe)

    inside = sub.add_parser("inside", help="head classes and frequency usage of a real model")
    inside.add_argument("model", choices=("smollm2", "minilm"))
    inside.add_argument("--window", type=int, default=32, help="tokens per window (32…256)")
    inside.add_argument("--json", action="store_true", help="print the findings as JSON")
    inside.set_defaults(func=cmd_inside)

    add_lab_commands(sub).set_defaults(func=run_lab_command)  # lab list / lab run QUESTION
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status (2 for bad input, with the reason on stderr)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
