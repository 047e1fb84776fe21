"""Hand-set runs of ``aa_star`` ("APE only") for the hand-filled stores of
``conftest.hand_store``: config overrides per encoding and two APE, three APE+reg and one
NoPE run as ``(task, variant, seed, overrides, accuracies on 1-50 / 51-100 / 101-150)``."""

APE = {"model.pe": "ape"}
REG = {"model.pe": "ape", "train.pe_penalty": 1e-3, "train.weight_penalty": 0.01}
NOPE = {"model.pe": "nope"}

THREE = [
    ("aa_star", "ape", 0, APE, (1.0, 0.95, 0.92)),
    ("aa_star", "ape", 1, APE, (1.0, 0.93, 0.90)),
    ("aa_star", "ape_reg", 0, REG, (1.0, 0.5, 0.2)),
    ("aa_star", "ape_reg", 1, REG, (1.0, 0.7, 0.4)),
    ("aa_star", "ape_reg", 2, REG, (0.8, 0.9, 0.9)),
    ("aa_star", "nope", 0, NOPE, (1.0, 0.3, 0.1)),
]
