"""What Streamlit's ``runner.postScriptGC`` costs a posviz server: one full collection
(``gc.collect(2)``, which Streamlit runs after every script run when the option is on) in a
process that has imported what the app's pages import, timed in CPU seconds.

    .venv/bin/python bench/bench_post_script_gc.py [--repeat 5]

Prints the objects tracked and each collection's CPU seconds (docs/benchmarks.md, "Server").
"""

from __future__ import annotations

import argparse
import gc
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import altair  # noqa: F401
    import numpy  # noqa: F401
    import streamlit  # noqa: F401
    import torch  # noqa: F401
    import transformers  # noqa: F401
    from transformers import BertModel  # noqa: F401

    import posviz.navigation
    import posviz.ui  # noqa: F401

    print(f"objects tracked by the collector: {len(gc.get_objects()):,}")
    for _ in range(args.repeat):
        start = time.process_time()
        gc.collect(2)
        print(f"gc.collect(2): {time.process_time() - start:.3f} CPU-s")


if __name__ == "__main__":
    main()
