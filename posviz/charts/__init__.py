"""Chart builders: arrays in, ``alt.Chart`` out (returned, never displayed)."""
