"""A standardised linear scorer stored as JSON: the shape of both trained models in the project
(the hybrid reranker and the offline answerer's option model).

Why one class: both are a dozen weights over hand-made features, kept reviewable in git with their
provenance, and both must refuse a file trained on another feature list instead of scoring
garbage. Subclasses name their features (``FEATURE_NAMES``) and how to retrain (``RETRAIN``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np


@dataclass
class StandardisedLinearModel:
    weights: list[float]
    mean: list[float]
    std: list[float]
    features: list[str] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)

    FEATURE_NAMES: ClassVar[tuple[str, ...]] = ()
    RETRAIN: ClassVar[str] = "retrain the model"

    def score(self, x: np.ndarray) -> np.ndarray:
        """score = ((x − mean) / std) · weights, one value per row."""
        z = (np.asarray(x, dtype=np.float64) - np.asarray(self.mean)) / np.asarray(self.std)
        return z @ np.asarray(self.weights)

    def save(self, path: Path | str) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path | str):
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no trained model; {cls.RETRAIN}")
        data = json.loads(path.read_text(encoding="utf-8"))
        if tuple(data.get("features", ())) != cls.FEATURE_NAMES:
            raise ValueError(f"{path}: trained on features {data.get('features')}, this code computes "
                             f"{list(cls.FEATURE_NAMES)}; {cls.RETRAIN}")
        return cls(**data)
