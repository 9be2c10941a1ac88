"""``lexpipe deploy check``: the shipped deploy/dagster.yaml passes against a live PostgreSQL once
``lexpipe deploy init`` ran, and each kind of bad configuration is refused (exit 2) with a message
naming the field."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "deploy"))
from pg_cluster import PgCluster, require_pg_bin, start_cluster  # noqa: E402  (tests/deploy)

from lexpipe.cli import main  # noqa: E402
from lexpipe.deploy.check import check_config  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "deploy" / "dagster.yaml"


@pytest.fixture(scope="module")
def pg() -> Iterator[PgCluster]:
    cluster = start_cluster(require_pg_bin(), db="dagster_check")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def initialised(pg: PgCluster) -> dict[str, int]:
    """``lexpipe deploy init`` on the module's database: tables created, pool limits set."""
    mp = pytest.MonkeyPatch()
    for k, v in pg.env().items():
        mp.setenv(k, v)
    try:
        assert main(["deploy", "init", "--config", str(SHIPPED)]) == 0
        from lexpipe.deploy.instance import init_instance

        return init_instance(SHIPPED)  # idempotent: the same limits again
    finally:
        mp.undo()


@pytest.fixture
def pg_env(pg: PgCluster, initialised, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for k, v in pg.env().items():
        monkeypatch.setenv(k, v)
    return pg.env()


def test_init_sets_the_asset_pools(initialised):
    assert initialised == {"index": 1, "llm": 1}


def test_fresh_instance_reports_pools_without_limit(pg, monkeypatch):
    """Before `lexpipe deploy init` (an empty database): the check names both pools and the fix."""
    pg.psql("CREATE DATABASE dagster_fresh", db="postgres")
    for k, v in {**pg.env(), "DAGSTER_PG_DB": "dagster_fresh"}.items():
        monkeypatch.setenv(k, v)
    problems = check_config(SHIPPED)
    assert [(p.kind, p.field) for p in problems] == [("pools", "instance pool 'index'"), ("pools", "instance pool 'llm'")]
    assert all("lexpipe deploy init" in p.message for p in problems)


def _variant(tmp_path: Path, edit) -> Path:
    cfg = yaml.safe_load(SHIPPED.read_text())
    edit(cfg)
    path = tmp_path / "dagster.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_shipped_config_passes_against_live_postgres(pg_env, capsys):
    assert check_config(SHIPPED) == []
    assert main(["deploy", "check", "--config", str(SHIPPED)]) == 0
    assert "ok" in capsys.readouterr().out


def test_missing_env_vars_named(pg_env, monkeypatch, capsys):
    monkeypatch.delenv("DAGSTER_PG_PASSWORD")
    monkeypatch.delenv("DAGSTER_PG_HOST")
    assert main(["deploy", "check", "--config", str(SHIPPED)]) == 2
    err = capsys.readouterr().err
    assert "storage.postgres.postgres_db.password: environment variable DAGSTER_PG_PASSWORD is not set" in err
    assert "DAGSTER_PG_HOST is not set" in err
    assert "DAGSTER_PG_USER" not in err  # set: not reported


def test_unreachable_postgres(pg_env, monkeypatch):
    from pg_cluster import free_port

    monkeypatch.setenv("DAGSTER_PG_PORT", str(free_port()))
    (problem,) = check_config(SHIPPED)
    assert problem.kind == "postgres" and "cannot connect to lexpipe@127.0.0.1:" in problem.message
    assert "refused" in problem.message


def test_wrong_password(pg_env, monkeypatch):
    monkeypatch.setenv("DAGSTER_PG_PASSWORD", "not-the-password")
    (problem,) = check_config(SHIPPED)
    assert problem.kind == "postgres" and "password authentication failed" in problem.message


def test_bad_yaml_names_line(tmp_path, capsys):
    bad = tmp_path / "dagster.yaml"
    bad.write_text("storage:\n  postgres:\n    postgres_db: [unclosed\n")
    assert main(["deploy", "check", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"yaml: bad YAML at {bad}:4:1" in err or f"yaml: bad YAML at {bad}:" in err


def test_not_a_mapping(tmp_path):
    bad = tmp_path / "dagster.yaml"
    bad.write_text("- just\n- a list\n")
    (problem,) = check_config(bad)
    assert problem.kind == "yaml" and "not a mapping" in problem.message


def test_missing_file(tmp_path):
    (problem,) = check_config(tmp_path / "nope.yaml")
    assert problem.kind == "yaml" and "cannot read" in problem.message


def test_literal_password_refused(tmp_path, pg_env):
    path = _variant(tmp_path, lambda c: c["storage"]["postgres"]["postgres_db"].update(password="hunter2"))
    kinds = {(p.kind, p.field) for p in check_config(path)}
    assert ("secret", "storage.postgres.postgres_db.password") in kinds


def test_password_in_postgres_url_refused(tmp_path, pg_env):
    def edit(c):
        c["storage"]["postgres"] = {"postgres_url": "postgresql://lexpipe:hunter2@127.0.0.1:5432/dagster"}
    problems = check_config(_variant(tmp_path, edit))
    assert any(p.kind == "secret" and p.field == "storage.postgres.postgres_url" for p in problems)


def test_schema_error_names_field(tmp_path, pg_env):
    def edit(c):
        c["run_monitoring"]["poll_interval_seconds"] = "often"
    problems = check_config(_variant(tmp_path, edit))
    assert [p.kind for p in problems] == ["schema"]
    assert "poll_interval_seconds" in problems[0].field + problems[0].message


def test_sqlite_storage_is_not_production(tmp_path, pg_env):
    def edit(c):
        c["storage"] = {"sqlite": {"base_dir": "/tmp/x"}}
    (problem,) = check_config(_variant(tmp_path, edit))
    assert problem.kind == "storage" and "PostgreSQL" in problem.message and "sqlite" in problem.message


def test_unknown_run_tag_and_op_granularity(tmp_path, pg_env):
    def edit(c):
        c["concurrency"]["runs"]["tag_concurrency_limits"][0]["key"] = "lexpipe/akt"
        c["concurrency"]["pools"]["granularity"] = "op"
    problems = {(p.kind, p.field): p.message for p in check_config(_variant(tmp_path, edit))}
    assert "'lexpipe/akt'" in problems[("tags", "concurrency.runs.tag_concurrency_limits[0].key")]
    assert "run granularity" in problems[("pools", "concurrency.pools.granularity")]


def test_unloadable_class(tmp_path, pg_env):
    def edit(c):
        c["run_coordinator"]["module"] = "dagster.core.run_coordinator"  # the pre-1.x path: gone in 1.13
    (problem,) = check_config(_variant(tmp_path, edit))
    assert problem.kind == "class" and problem.field == "run_coordinator"


def test_unknown_pool_on_the_instance(tmp_path, pg_env, pg, monkeypatch):
    """A limit set on the instance for a pool no asset uses (a typo of `index`) is reported; the
    pools the assets use are not."""
    import dagster as dg

    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(SHIPPED.read_text())
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.event_log_storage.set_concurrency_slots("indx", 1)
    try:
        (problem,) = check_config(SHIPPED)
        assert problem.kind == "pools" and "'indx'" in problem.message and "index, llm" in problem.message
    finally:
        pg.psql("DELETE FROM concurrency_limits WHERE concurrency_key = 'indx'")
    assert check_config(SHIPPED) == []


def test_scheme_without_its_driver(tmp_path, pg_env):
    """SQLAlchemy 2.1 maps a plain ``postgresql`` scheme to psycopg 3, which is not installed: the
    instance would fail on its first connection; the check says so before."""
    def edit(c):
        del c["storage"]["postgres"]["postgres_db"]["scheme"]
    (problem,) = check_config(_variant(tmp_path, edit))
    assert problem.kind == "postgres" and problem.field.endswith("scheme") and "psycopg2" in problem.message
