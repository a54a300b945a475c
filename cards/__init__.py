"""The dataset card template, rendered by `mrtasks.curate.card` at build time."""
