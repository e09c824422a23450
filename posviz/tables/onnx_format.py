"""One initializer of an ONNX model file, as a numpy array (the ``onnx`` package, no runtime).

An ONNX file is a protobuf ``ModelProto`` whose graph lists its weights as ``initializer``
tensors (https://onnx.ai/onnx/api/classes.html, ``TensorProto``); ``onnx.numpy_helper.to_array``
turns one into an array. Weights stored outside the file ("external data") are not followed:
a packaged checkpoint is one file, and a path inside a file must never make posviz read another.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def onnx_initializer(path: Path, name: str, *, where: str) -> np.ndarray:
    """The initializer called ``name`` in the ONNX file at ``path``, as float32, its stored shape.

    Parsing holds the whole protobuf in memory while it runs (about twice the file: the 69 MB
    paraphrase-MiniLM-L3-v2 file peaks near 130 MB and takes about 0.1 s); only the one array
    is kept.

    Raises:
        ValueError: the onnx package is missing (with the install command), the file is not a
            readable ONNX model, has no such initializer, the initializer's data lies outside
            the file, or it is not a floating-point tensor.
    """
    try:
        import onnx  # lazy: only packaged ONNX checkpoints need it (~0.2 s to import)
        from google.protobuf.message import DecodeError
        from onnx import numpy_helper
    except ImportError:
        raise ValueError(
            f"Reading {where} needs the onnx package: run `pip install onnx` (it is in "
            "requirements.txt and in `pip install .[bundled]`)."
        ) from None

    try:
        model = onnx.load(str(path), load_external_data=False)
    except (DecodeError, OSError, ValueError) as exc:
        raise ValueError(f"{where} is not a readable ONNX model ({type(exc).__name__}).") from None
    for tensor in model.graph.initializer:
        if tensor.name != name:
            continue
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            raise ValueError(
                f"{where}: {name!r} is stored outside the file; posviz reads one file."
            )
        array = numpy_helper.to_array(tensor)
        if not np.issubdtype(array.dtype, np.floating):
            raise ValueError(f"{where}: {name!r} holds {array.dtype} values, not floating point.")
        return np.ascontiguousarray(array, dtype=np.float32).copy()
    near = [t.name for t in model.graph.initializer if "pos" in t.name.lower()][:6]
    raise ValueError(
        f"{where} has no initializer named {name!r}"
        + (f" (with 'pos' in their names: {near})." if near else ".")
    )
