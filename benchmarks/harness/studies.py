"""The generated study several benchmarks time (report.py, jobs.py): 12 raters x 3
scales x 6 models, one run each, seed 1, in a SQLite file kept for reuse."""

from __future__ import annotations

from pathlib import Path

__all__ = ["MODELS", "synthetic_study"]

MODELS = ("gpt", "gemini", "llama", "qwen", "deepseek", "mistral")


def synthetic_study(path: Path, n_items: int) -> str:
    """The SQLite URL of the study (slug ``bench``), built unless ``path`` exists."""
    from sqlalchemy import create_engine
    from sqlmodel import Session, SQLModel

    from annotator import models  # noqa: F401  (the tables create_all makes)
    from annotator.data.synthetic import SyntheticSpec, build_synthetic_study
    from annotator.db import normalise_url

    url = f"sqlite:///{path}"
    if path.exists():
        return url
    engine = create_engine(normalise_url(url))
    SQLModel.metadata.create_all(engine)
    spec = SyntheticSpec(
        slug="bench",
        n_items=n_items,
        n_raters=12,
        models=MODELS,
        runs=1,
        extra_temperatures=(),
        seed=1,
    )
    with Session(engine) as session:
        build_synthetic_study(session, spec)
        session.commit()
    engine.dispose()
    return url
