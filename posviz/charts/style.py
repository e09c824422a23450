"""Shared chart settings for the sinusoid/table charts."""

import altair as alt

# Width follows the container (Streamlit stretches charts); height is the plot area's own height.
# Streamlit's default ("fit" including padding) would squeeze titles, legends and axes into the
# given height and leave a sliver of plot.
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding")
