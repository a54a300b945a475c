"""Reference MR-RLVR training: YAML recipes and `python -m training.run` over TRL's GRPOTrainer."""
