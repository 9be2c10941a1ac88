"""deploy/compose.yaml and deploy/dagster.yaml stay consistent with the code: every ``LEXPIPE_``
variable the compose file sets is a field of a settings class (a typo would be ignored silently,
``extra="ignore"``), every ``DAGSTER_PG_`` variable is one deploy/dagster.yaml reads, every image is
pinned to an exact version, every service has a health check, and deploy/dagster.yaml is a valid
Dagster instance config whose only env var references are the connection's (no secret literal)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from pydantic_settings import BaseSettings

from connectors.llm_client import LLMSettings
from connectors.openlegaldata.settings import OpenLegalDataSettings
from connectors.saos.settings import SaosSettings
from core.settings import Settings
from lexpipe.deploy.check import _env_refs, _literal_secrets, check_schema
from pipelines.retrieval.elasticsearch.settings import ElasticsearchSettings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
COMPOSE = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
INSTANCE = yaml.safe_load((DEPLOY / "dagster.yaml").read_text())
SETTINGS: tuple[type[BaseSettings], ...] = (Settings, ElasticsearchSettings, OpenLegalDataSettings, SaosSettings,
                                             LLMSettings)
LEXPIPE_SERVICES = ("code-location", "dagster-daemon", "dagster-webserver", "search-api")
# a tag with digits after the last ":" of the image name, e.g. 15.18-bookworm, 9.1.0-stempel, 0.1.0
PINNED = re.compile(r"^[^@]+:(?P<tag>\d+(\.\d+)+[^:/]*)(@sha256:[0-9a-f]{64})?$")


def setting_env_names() -> set[str]:
    names = set()
    for cls in SETTINGS:
        prefix = cls.model_config.get("env_prefix", "")
        names |= {f"{prefix}{field}".upper() for field in cls.model_fields}
    return names


def _dockerfile_images() -> dict[str, str]:
    found = {}
    for dockerfile in DEPLOY.rglob("Dockerfile"):
        for line in dockerfile.read_text().splitlines():
            if line.startswith("FROM "):
                found[str(dockerfile.relative_to(DEPLOY))] = line.split()[1]
    return found


def test_lexpipe_services_are_the_four():
    assert set(LEXPIPE_SERVICES) <= set(COMPOSE["services"])
    assert {"postgres", "elasticsearch"} <= set(COMPOSE["services"])


@pytest.mark.parametrize("service", LEXPIPE_SERVICES)
def test_every_lexpipe_env_var_is_a_setting(service):
    env = COMPOSE["services"][service]["environment"]
    known = setting_env_names()
    lexpipe = [k for k in env if k.startswith("LEXPIPE_")]
    assert lexpipe, f"{service} sets no LEXPIPE_ variable"
    unknown = sorted(set(lexpipe) - known)
    assert not unknown, f"{service}: {unknown} are no settings field (known: {sorted(known)})"
    dagster_vars = {name for _, name in _env_refs(INSTANCE)}
    pg = {k for k in env if k.startswith("DAGSTER_PG_")}
    assert pg <= dagster_vars, f"{service}: {sorted(pg - dagster_vars)} are not read by deploy/dagster.yaml"
    other = sorted(k for k in env if not k.startswith(("LEXPIPE_", "DAGSTER_PG_")))
    assert not other, f"{service}: unexpected variables {other}"


def test_no_secret_in_compose_values():
    """Passwords and keys come from /run/secrets files (deploy/lexpipe/entrypoint.sh)."""
    for name, svc in COMPOSE["services"].items():
        for key, value in (svc.get("environment") or {}).items():
            if re.search(r"PASSWORD|API_KEY|SECRET|TOKEN", key) and not key.endswith("_FILE"):
                pytest.fail(f"{name}: {key}={value!r} is a secret set in the compose file; use a secrets file")
    entrypoint = (DEPLOY / "lexpipe" / "entrypoint.sh").read_text()
    assert "pg_password:DAGSTER_PG_PASSWORD" in entrypoint and "es_api_key:LEXPIPE_ES_API_KEY" in entrypoint
    assert "LEXPIPE_ES_API_KEY" in setting_env_names()


def test_a_variable_that_is_no_setting_is_caught():
    """The check above can fail: a misspelt name is not among the settings."""
    assert "LEXPIPE_ELASTICSEARCH_URL" in setting_env_names()
    assert "LEXPIPE_ELASTIC_URL" not in setting_env_names()


@pytest.mark.parametrize("service", sorted(COMPOSE["services"]))
def test_image_pinned_and_healthchecked(service):
    svc = COMPOSE["services"][service]
    image = svc.get("image")
    assert image, f"{service} has no image name (a built service is tagged with its version too)"
    assert PINNED.match(image) and "latest" not in image, f"{service}: image {image!r} is not pinned to a version"
    check = svc.get("healthcheck")
    assert check and check.get("test") and not check.get("disable"), f"{service} has no health check"


def test_base_images_pinned():
    images = _dockerfile_images()
    assert set(images) == {"elasticsearch/Dockerfile", "lexpipe/Dockerfile"}
    for path, image in images.items():
        assert PINNED.match(image), f"{path}: FROM {image} is not pinned to a version"
    es_tag = images["elasticsearch/Dockerfile"].rsplit(":", 1)[1]
    assert es_tag.startswith("9."), "Elasticsearch 9"
    assert COMPOSE["services"]["elasticsearch"]["image"].endswith(f":{es_tag}-stempel")
    assert "elasticsearch-plugin install --batch analysis-stempel" in (DEPLOY / "elasticsearch" / "Dockerfile").read_text()


def test_pin_pattern_rejects_floating_tags():
    for bad in ("postgres", "postgres:latest", "postgres:15", "elasticsearch:9-stempel", "lexpipe:main"):
        assert not PINNED.match(bad), bad
    assert PINNED.match("postgres:15.18-bookworm@sha256:" + "a" * 64)


def test_volumes_declared():
    declared = set(COMPOSE["volumes"])
    for name, svc in COMPOSE["services"].items():
        for v in svc.get("volumes") or []:
            source = v.split(":")[0]
            if not source.startswith((".", "/")):
                assert source in declared, f"{name}: volume {source} is not declared"
    assert {"pgdata", "esdata", "lexpipe-home"} <= declared


def test_instance_config_valid_and_env_only_for_the_connection():
    assert check_schema(INSTANCE) == []
    refs = dict(_env_refs(INSTANCE))
    assert set(refs) == {f"storage.postgres.postgres_db.{f}" for f in ("hostname", "port", "username", "password",
                                                                          "db_name")}
    assert refs["storage.postgres.postgres_db.password"] == "DAGSTER_PG_PASSWORD"
    assert list(_literal_secrets(INSTANCE)) == []
    assert INSTANCE["run_coordinator"]["class"] == "QueuedRunCoordinator"
    assert INSTANCE["run_monitoring"]["enabled"] is True
    assert INSTANCE["concurrency"]["pools"]["granularity"] == "run"
    assert [lim["key"] for lim in INSTANCE["concurrency"]["runs"]["tag_concurrency_limits"]] == ["lexpipe/act"]


def test_workspace_points_at_the_code_location_service():
    ws = yaml.safe_load((DEPLOY / "workspace.yaml").read_text())
    (loc,) = ws["load_from"]
    assert loc["grpc_server"]["host"] == "code-location"
    cmd = COMPOSE["services"]["code-location"]["command"]
    assert cmd[cmd.index("-p") + 1] == str(loc["grpc_server"]["port"]) and "assets.definitions" in cmd


def test_entrypoint_exports_mounted_secrets(tmp_path):
    """deploy/lexpipe/entrypoint.sh: a mounted secret file becomes its env var (trailing newline
    dropped), an empty placeholder or a missing file sets nothing, and the command runs."""
    import subprocess

    (tmp_path / "pg_password").write_text("s3cret pw\n")
    (tmp_path / "es_api_key").write_text("")
    env = {"PATH": "/usr/bin:/bin", "SECRETS_DIR": str(tmp_path)}
    out = subprocess.run(["sh", str(DEPLOY / "lexpipe" / "entrypoint.sh"), "sh", "-c",
                          'echo "pg=[$DAGSTER_PG_PASSWORD] es=[${LEXPIPE_ES_API_KEY-unset}]"'],
                         env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "pg=[s3cret pw] es=[unset]"
