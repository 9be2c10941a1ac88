"""Configuration of the gesetze connector: ``LEXPIPE_GESETZE_*``.

Where the repository comes from (``url``: a remote git URL where there is network, a local clone
or bundle file here), which branch, and the replay mode: a *setting of the source*, not a test
double — with ``replay`` on, the source shows its history one commit at a time (the clone holds
all of it; what the source offers is the replay cursor), so the sensor, the refresh runs, the
change feed and the webhooks see the 169 real commits of the bundle arrive as they once did.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

REMOTE_URL = "https://github.com/bundestag/gesetze.git"
SAMPLE_BUNDLE = Path("de") / "gesetze-history" / "gesetze-md.bundle"


class GesetzeSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LEXPIPE_GESETZE_", extra="ignore")

    url: str | None = Field(None, description=(
        "The gesetze-style git repository: a remote URL, a local clone or a bundle file. Unset: the "
        "sample bundle <LEXPIPE_SAMPLE_DIR>/de/gesetze-history/gesetze-md.bundle when offline, else "
        f"{REMOTE_URL}."))
    branch: str | None = Field(None, description="The branch to follow (unset: the repository's HEAD).")
    replay: bool = Field(False, description=(
        "Replay mode: the source offers its history one commit at a time (the replay cursor, moved "
        "by `lexpipe replay` or the sensor once the previous commit is applied) instead of its head."))
    replay_start: int = Field(-1, description=(
        "Replay mode: the first commit offered, as its position in the first-parent history "
        "(-1: the initial import, the first commit with acts)."))
    replay_step: int = Field(1, ge=1, description="Replay mode: commits the cursor moves per step.")
    until: int = Field(-1, description=(
        "Offer the history only up to this position (inclusive; -1: all): a source frozen at a point, "
        "e.g. the initial import for a first load."))


def default_url(settings) -> str:
    """``LEXPIPE_GESETZE_URL``, else the sample bundle (offline) or the public repository."""
    own = GesetzeSettings()
    if own.url:
        return own.url
    if getattr(settings, "offline", True):
        bundle = Path(settings.sample_dir) / SAMPLE_BUNDLE
        if not bundle.is_file():
            raise FileNotFoundError(f"{bundle}: the offline gesetze bundle is missing (set LEXPIPE_GESETZE_URL "
                                    "or LEXPIPE_SAMPLE_DIR)")
        return str(bundle)
    return REMOTE_URL
