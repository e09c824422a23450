"""Stored answers of the experiment pages at their defaults, for the home page's cards.

Written by ``scripts/make_home_answers.py`` (it runs each page and keeps its verdict sentence and
its hero chart's Vega-Lite spec); ``tests/test_home_answers.py`` checks them against the pages.
"""

ANSWERS: dict[str, dict] = {
    "pages/probing.py": {
        "verdict": "Yes for MiniLM-L6 (bundled): a straight-line readout recovers each token's position. A linear probe reads held-out positions back 21.5 ± 2.56 positions off, against 183 ± 31.8 for a random table probed the same way.",  # noqa: E501
        "hero": {
            "layer": [
                {
                    "mark": {"type": "rule", "strokeWidth": 3},
                    "encoding": {
                        "color": {
                            "field": "entity",
                            "legend": None,
                            "scale": {
                                "domain": ["MiniLM-L6 (bundled)", "random", "sinusoid (512×384)"],
                                "range": ["#4c78a8", "#8c8c8c", "#f58518"],
                            },
                            "sort": ["MiniLM-L6 (bundled)", "random", "sinusoid (512×384)"],
                            "title": None,
                            "type": "nominal",
                        },
                        "x": {
                            "axis": {"titleAnchor": "end"},
                            "field": "low",
                            "title": "mean absolute error (positions)",
                            "type": "quantitative",
                        },
                        "x2": {"field": "high"},
                        "y": {
                            "axis": {"labelLimit": 0},
                            "field": "label",
                            "sort": [
                                "MiniLM-L6 (bundled)",
                                "random table like MiniLM-L6 (bundled)",
                                "sinusoid (512×384)",
                                "random table like sinusoid (512×384)",
                            ],
                            "title": None,
                            "type": "nominal",
                        },
                    },
                },
                {
                    "mark": {"type": "circle", "opacity": 1, "size": 140},
                    "encoding": {
                        "color": {
                            "field": "entity",
                            "legend": None,
                            "scale": {
                                "domain": ["MiniLM-L6 (bundled)", "random", "sinusoid (512×384)"],
                                "range": ["#4c78a8", "#8c8c8c", "#f58518"],
                            },
                            "sort": ["MiniLM-L6 (bundled)", "random", "sinusoid (512×384)"],
                            "title": None,
                            "type": "nominal",
                        },
                        "tooltip": [
                            {"field": "label", "title": "what", "type": "nominal"},
                            {"field": "mean", "format": ".3~g", "type": "quantitative"},
                            {
                                "field": "low",
                                "format": ".3~g",
                                "title": "low",
                                "type": "quantitative",
                            },
                            {
                                "field": "high",
                                "format": ".3~g",
                                "title": "high",
                                "type": "quantitative",
                            },
                        ],
                        "x": {
                            "axis": {"titleAnchor": "end"},
                            "field": "mean",
                            "title": "mean absolute error (positions)",
                            "type": "quantitative",
                        },
                        "y": {
                            "axis": {"labelLimit": 0},
                            "field": "label",
                            "sort": [
                                "MiniLM-L6 (bundled)",
                                "random table like MiniLM-L6 (bundled)",
                                "sinusoid (512×384)",
                                "random table like sinusoid (512×384)",
                            ],
                            "title": None,
                            "type": "nominal",
                        },
                    },
                },
                {
                    "mark": {"type": "text", "align": "left", "dx": 10, "dy": -10, "fontSize": 12},
                    "encoding": {
                        "color": {
                            "field": "entity",
                            "legend": None,
                            "scale": {
                                "domain": ["MiniLM-L6 (bundled)", "random", "sinusoid (512×384)"],
                                "range": ["#4c78a8", "#8c8c8c", "#f58518"],
                            },
                            "sort": ["MiniLM-L6 (bundled)", "random", "sinusoid (512×384)"],
                            "title": None,
                            "type": "nominal",
                        },
                        "text": {"field": "mean", "format": ".3~g", "type": "quantitative"},
                        "x": {"field": "mean", "type": "quantitative"},
                        "y": {
                            "axis": {"labelLimit": 0},
                            "field": "label",
                            "sort": [
                                "MiniLM-L6 (bundled)",
                                "random table like MiniLM-L6 (bundled)",
                                "sinusoid (512×384)",
                                "random table like sinusoid (512×384)",
                            ],
                            "title": None,
                            "type": "nominal",
                        },
                    },
                    "transform": [{"filter": "datum.mean <= 193.4"}],
                },
                {
                    "mark": {
                        "type": "text",
                        "align": "right",
                        "dx": -10,
                        "dy": -10,
                        "fontSize": 12,
                    },
                    "encoding": {
                        "color": {
                            "field": "entity",
                            "legend": None,
                            "scale": {
                                "domain": ["MiniLM-L6 (bundled)", "random", "sinusoid (512×384)"],
                                "range": ["#4c78a8", "#8c8c8c", "#f58518"],
                            },
                            "sort": ["MiniLM-L6 (bundled)", "random", "sinusoid (512×384)"],
                            "title": None,
                            "type": "nominal",
                        },
                        "text": {"field": "mean", "format": ".3~g", "type": "quantitative"},
                        "x": {"field": "mean", "type": "quantitative"},
                        "y": {
                            "axis": {"labelLimit": 0},
                            "field": "label",
                            "sort": [
                                "MiniLM-L6 (bundled)",
                                "random table like MiniLM-L6 (bundled)",
                                "sinusoid (512×384)",
                                "random table like sinusoid (512×384)",
                            ],
                            "title": None,
                            "type": "nominal",
                        },
                    },
                    "transform": [{"filter": "datum.mean > 193.4"}],
                },
            ],
            "autosize": {"contains": "padding", "type": "fit-x"},
            "data": {"name": "dataset_0"},
            "height": 184,
            "title": {
                "text": "How far off is the probe?",
                "anchor": "start",
                "subtitle": ["mean absolute error, lower is better"],
                "subtitleColor": {
                    "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                },
            },
            "width": 480,
            "$schema": "https://vega.github.io/schema/vega-lite/v5.20.1.json",
            "description": "Dot: mean absolute error in positions (lower is better); bar: ± one standard deviation over blocks of test positions or folds. Grey: a random table of the same shape and per-column scale, probed the same way.",  # noqa: E501
            "config": {
                "axis": {
                    "labelColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                    "titleColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                },
                "legend": {
                    "labelColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                    "titleColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                },
                "header": {
                    "labelColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                    "titleColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                },
            },
            "datasets": {
                "dataset_0": [
                    {
                        "label": "MiniLM-L6 (bundled)",
                        "entity": "MiniLM-L6 (bundled)",
                        "mean": 21.5115049521,
                        "low": 18.9507497635,
                        "high": 24.0722601406,
                    },
                    {
                        "label": "random table like MiniLM-L6 (bundled)",
                        "entity": "random",
                        "mean": 182.5235996165,
                        "low": 150.7082156505,
                        "high": 214.3389835825,
                    },
                    {
                        "label": "sinusoid (512×384)",
                        "entity": "sinusoid (512×384)",
                        "mean": 0.0,
                        "low": -0.0,
                        "high": 0.0,
                    },
                    {
                        "label": "random table like sinusoid (512×384)",
                        "entity": "random",
                        "mean": 358.1919144528,
                        "low": 329.6360024763,
                        "high": 386.7478264293,
                    },
                ]
            },
        },
    },
    "pages/add_vs_concat.py": {
        "verdict": "Mostly apart: positions and words use different directions. Only 7.8% of MiniLM's position variance (positions 0…127) lies in the words' 264-dimensional principal subspace, against 68.9% ± 1.0% for random subspaces of that size; so the sum behaves much like a concatenation.",  # noqa: E501
        "hero": {
            "layer": [
                {
                    "mark": {"type": "rule", "strokeWidth": 3},
                    "encoding": {
                        "color": {
                            "field": "entity",
                            "legend": None,
                            "scale": {
                                "domain": ["MiniLM", "random", "sinusoid"],
                                "range": ["#4c78a8", "#8c8c8c", "#f58518"],
                            },
                            "sort": ["MiniLM", "random", "sinusoid"],
                            "title": None,
                            "type": "nominal",
                        },
                        "x": {
                            "axis": {"titleAnchor": "end"},
                            "field": "low",
                            "title": [
                                "share of position variance inside",
                                "the words' principal subspace",
                            ],
                            "type": "quantitative",
                        },
                        "x2": {"field": "high"},
                        "y": {
                            "axis": {"labelLimit": 0},
                            "field": "label",
                            "sort": [
                                "MiniLM",
                                "random subspaces, MiniLM",
                                "sinusoid",
                                "random subspaces, sinusoid",
                            ],
                            "title": None,
                            "type": "nominal",
                        },
                    },
                },
                {
                    "mark": {"type": "circle", "opacity": 1, "size": 140},
                    "encoding": {
                        "color": {
                            "field": "entity",
                            "legend": None,
                            "scale": {
                                "domain": ["MiniLM", "random", "sinusoid"],
                                "range": ["#4c78a8", "#8c8c8c", "#f58518"],
                            },
                            "sort": ["MiniLM", "random", "sinusoid"],
                            "title": None,
                            "type": "nominal",
                        },
                        "tooltip": [
                            {"field": "label", "title": "what", "type": "nominal"},
                            {"field": "mean", "format": ".1%", "type": "quantitative"},
                            {
                                "field": "low",
                                "format": ".1%",
                                "title": "low",
                                "type": "quantitative",
                            },
                            {
                                "field": "high",
                                "format": ".1%",
                                "title": "high",
                                "type": "quantitative",
                            },
                        ],
                        "x": {
                            "axis": {"format": ".0%", "titleAnchor": "end"},
                            "field": "mean",
                            "title": [
                                "share of position variance inside",
                                "the words' principal subspace",
                            ],
                            "type": "quantitative",
                        },
                        "y": {
                            "axis": {"labelLimit": 0},
                            "field": "label",
                            "sort": [
                                "MiniLM",
                                "random subspaces, MiniLM",
                                "sinusoid",
                                "random subspaces, sinusoid",
                            ],
                            "title": None,
                            "type": "nominal",
                        },
                    },
                },
                {
                    "mark": {"type": "text", "align": "left", "dx": 10, "dy": -10, "fontSize": 12},
                    "encoding": {
                        "color": {
                            "field": "entity",
                            "legend": None,
                            "scale": {
                                "domain": ["MiniLM", "random", "sinusoid"],
                                "range": ["#4c78a8", "#8c8c8c", "#f58518"],
                            },
                            "sort": ["MiniLM", "random", "sinusoid"],
                            "title": None,
                            "type": "nominal",
                        },
                        "text": {"field": "mean", "format": ".1%", "type": "quantitative"},
                        "x": {"field": "mean", "type": "quantitative"},
                        "y": {
                            "axis": {"labelLimit": 0},
                            "field": "label",
                            "sort": [
                                "MiniLM",
                                "random subspaces, MiniLM",
                                "sinusoid",
                                "random subspaces, sinusoid",
                            ],
                            "title": None,
                            "type": "nominal",
                        },
                    },
                    "transform": [{"filter": "datum.mean <= 0.3494"}],
                },
                {
                    "mark": {
                        "type": "text",
                        "align": "right",
                        "dx": -10,
                        "dy": -10,
                        "fontSize": 12,
                    },
                    "encoding": {
                        "color": {
                            "field": "entity",
                            "legend": None,
                            "scale": {
                                "domain": ["MiniLM", "random", "sinusoid"],
                                "range": ["#4c78a8", "#8c8c8c", "#f58518"],
                            },
                            "sort": ["MiniLM", "random", "sinusoid"],
                            "title": None,
                            "type": "nominal",
                        },
                        "text": {"field": "mean", "format": ".1%", "type": "quantitative"},
                        "x": {"field": "mean", "type": "quantitative"},
                        "y": {
                            "axis": {"labelLimit": 0},
                            "field": "label",
                            "sort": [
                                "MiniLM",
                                "random subspaces, MiniLM",
                                "sinusoid",
                                "random subspaces, sinusoid",
                            ],
                            "title": None,
                            "type": "nominal",
                        },
                    },
                    "transform": [{"filter": "datum.mean > 0.3494"}],
                },
            ],
            "autosize": {"contains": "padding", "type": "fit-x"},
            "data": {"name": "dataset_0"},
            "height": 184,
            "title": {
                "text": "Where does the position signal lie?",
                "anchor": "start",
                "subtitle": ["inside the words' 264 main directions (of 384)?"],
                "subtitleColor": {
                    "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                },
            },
            "width": 480,
            "$schema": "https://vega.github.io/schema/vega-lite/v5.20.1.json",
            "description": "Dot: the share of the table's position variance inside the words' principal subspace; grey: the same share for random subspaces of that size (bar: ± one standard deviation over 50 of them). Far below grey: positions and words use different directions, as a concatenation would.",  # noqa: E501
            "config": {
                "axis": {
                    "labelColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                    "titleColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                },
                "legend": {
                    "labelColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                    "titleColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                },
                "header": {
                    "labelColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                    "titleColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                },
            },
            "datasets": {
                "dataset_0": [
                    {
                        "label": "MiniLM",
                        "entity": "MiniLM",
                        "mean": 0.0783955146,
                        "low": 0.0783955146,
                        "high": 0.0783955146,
                    },
                    {
                        "label": "random subspaces, MiniLM",
                        "entity": "random",
                        "mean": 0.6885511409,
                        "low": 0.6783113008,
                        "high": 0.6987909811,
                    },
                    {
                        "label": "sinusoid",
                        "entity": "sinusoid",
                        "mean": 0.692440928,
                        "low": 0.692440928,
                        "high": 0.692440928,
                    },
                    {
                        "label": "random subspaces, sinusoid",
                        "entity": "random",
                        "mean": 0.6891051717,
                        "low": 0.680611266,
                        "high": 0.6975990774,
                    },
                ]
            },
        },
    },
    "pages/permutation.py": {
        "verdict": "Because attention sees its input as a set: without positions, order is invisible. Without positions “tom bit a dog” and “a dog bit tom” give the same vectors, permuted (largest difference 9.5e-07, 0.6 float32 rounding steps); with positions the same token differs by up to 0.92.",  # noqa: E501
        "hero": {
            "layer": [
                {
                    "mark": {"type": "rule", "strokeWidth": 3},
                    "encoding": {
                        "color": {
                            "field": "input",
                            "legend": {"orient": "top", "labelLimit": 0, "columns": 1},
                            "scale": {
                                "domain": [
                                    "without position embeddings",
                                    "with position embeddings",
                                ],
                                "range": ["#bab0ac", "#4c78a8"],
                            },
                            "sort": ["without position embeddings", "with position embeddings"],
                            "title": None,
                            "type": "nominal",
                        },
                        "tooltip": [
                            {"field": "label", "type": "nominal"},
                            {"field": "input", "type": "nominal"},
                            {"field": "distance", "format": ".2e", "type": "quantitative"},
                        ],
                        "x": {
                            "axis": {"labelAngle": 0},
                            "field": "label",
                            "sort": {"field": "position_b"},
                            "title": "token (position in A → in B)",
                            "type": "nominal",
                        },
                        "xOffset": {"field": "input", "type": "nominal"},
                        "y": {
                            "axis": {"format": "~e"},
                            "field": "distance",
                            "scale": {"type": "log", "domain": [1e-09, 100]},
                            "title": "‖out_B[k] − out_A[π(k)]‖₂ (log scale)",
                            "type": "quantitative",
                        },
                        "y2": {"datum": 1e-09},
                    },
                },
                {
                    "mark": {"type": "circle", "opacity": 1, "size": 70},
                    "encoding": {
                        "color": {
                            "field": "input",
                            "legend": {"orient": "top", "labelLimit": 0, "columns": 1},
                            "scale": {
                                "domain": [
                                    "without position embeddings",
                                    "with position embeddings",
                                ],
                                "range": ["#bab0ac", "#4c78a8"],
                            },
                            "sort": ["without position embeddings", "with position embeddings"],
                            "title": None,
                            "type": "nominal",
                        },
                        "tooltip": [
                            {"field": "label", "type": "nominal"},
                            {"field": "input", "type": "nominal"},
                            {"field": "distance", "format": ".2e", "type": "quantitative"},
                        ],
                        "x": {
                            "axis": {"labelAngle": 0},
                            "field": "label",
                            "sort": {"field": "position_b"},
                            "title": "token (position in A → in B)",
                            "type": "nominal",
                        },
                        "xOffset": {"field": "input", "type": "nominal"},
                        "y": {"field": "distance", "type": "quantitative"},
                    },
                },
            ],
            "data": {"name": "dataset_0"},
            "height": 420,
            "title": {
                "text": "Same token, two orders",
                "anchor": "start",
                "subtitle": ["how far apart are its two outputs?"],
                "subtitleColor": {
                    "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                },
            },
            "width": 960,
            "$schema": "https://vega.github.io/schema/vega-lite/v5.20.1.json",
            "description": "For each token of B: how far its output lies from the same token's output in A, without positions (grey, float rounding) and with them (blue). Log scale.",  # noqa: E501
            "config": {
                "axis": {
                    "labelColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                    "titleColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                },
                "legend": {
                    "labelColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                    "titleColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                },
                "header": {
                    "labelColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                    "titleColor": {
                        "expr": "isValid(background) && luminance(background) < 0.4 ? '#c4c8cf' : '#545a63'"  # noqa: E501
                    },
                },
            },
            "autosize": {"type": "fit", "contains": "padding"},
            "datasets": {
                "dataset_0": [
                    {
                        "label": "[CLS] (A0→B0)",
                        "position_b": 0,
                        "input": "without position embeddings",
                        "distance": 1.8753e-06,
                    },
                    {
                        "label": "a (A3→B1)",
                        "position_b": 1,
                        "input": "without position embeddings",
                        "distance": 2.35e-06,
                    },
                    {
                        "label": "dog (A4→B2)",
                        "position_b": 2,
                        "input": "without position embeddings",
                        "distance": 2.087e-06,
                    },
                    {
                        "label": "bit (A2→B3)",
                        "position_b": 3,
                        "input": "without position embeddings",
                        "distance": 1.8499e-06,
                    },
                    {
                        "label": "tom (A1→B4)",
                        "position_b": 4,
                        "input": "without position embeddings",
                        "distance": 2.2927e-06,
                    },
                    {
                        "label": "[SEP] (A5→B5)",
                        "position_b": 5,
                        "input": "without position embeddings",
                        "distance": 1.6852e-06,
                    },
                    {
                        "label": "[CLS] (A0→B0)",
                        "position_b": 0,
                        "input": "with position embeddings",
                        "distance": 0.0576625755,
                    },
                    {
                        "label": "a (A3→B1)",
                        "position_b": 1,
                        "input": "with position embeddings",
                        "distance": 6.275741805,
                    },
                    {
                        "label": "dog (A4→B2)",
                        "position_b": 2,
                        "input": "with position embeddings",
                        "distance": 3.2805437677,
                    },
                    {
                        "label": "bit (A2→B3)",
                        "position_b": 3,
                        "input": "with position embeddings",
                        "distance": 2.8682029217,
                    },
                    {
                        "label": "tom (A1→B4)",
                        "position_b": 4,
                        "input": "with position embeddings",
                        "distance": 4.305698388,
                    },
                    {
                        "label": "[SEP] (A5→B5)",
                        "position_b": 5,
                        "input": "with position embeddings",
                        "distance": 2.3082580555,
                    },
                ]
            },
        },
    },
}
