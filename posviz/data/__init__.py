"""Public-domain texts shipped with posviz for the experiments that run a model on real text."""
