"""``lexpipe deploy check``: is a Dagster instance configuration fit to run lexpipe in production?

Why a check of our own: Dagster reads ``dagster.yaml`` lazily, process by process. A typo in a pool
name or a missing ``DAGSTER_PG_PASSWORD`` shows up only when the daemon (or the webserver, or the
first run worker) loads the instance, often as a stack trace in a container's log. This check reads
the file once, before any process is started, and lists every problem it finds, each naming the
field:

- the YAML does not parse (with line and column) or is not a mapping;
- it does not fit Dagster's instance config schema (``dagster_instance_config_schema``);
- a secret is written in the file instead of an ``{env: NAME}`` reference (the PostgreSQL
  password, or a ``postgres_url`` with a password in it);
- an ``env:`` reference names a variable that is not set;
- the storage is not PostgreSQL (the production profile), SQLAlchemy cannot load the driver of the
  URL scheme (SQLAlchemy 2.1 maps ``postgresql://`` to psycopg 3, not installed: hence
  ``scheme: postgresql+psycopg2``), or PostgreSQL does not answer with the configured address, user
  and password (3 s connect timeout);
- the run queue's tag limits name a tag no lexpipe run carries (``KNOWN_RUN_TAGS``), the instance
  holds a limit for a pool no asset uses, or a pool the assets use has no limit yet (read from the
  ``concurrency_limits`` table; nothing is written; ``lexpipe deploy init`` sets them, see
  lexpipe/deploy/instance.py why), or the pool granularity is not ``run`` (see ../../dagster.yaml);
- a custom class (run launcher, coordinator) cannot be imported.

Each problem is a ``Problem(kind, field, message)``; the CLI prints them and exits 2.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

# run tags lexpipe's sensors and schedules set (assets/sensors.py, assets/benchmarks.py, ...) and
# Dagster's own; a tag limit on any other key never matches a run, which is a typo
KNOWN_RUN_TAGS = frozenset({"lexpipe/act", "lexpipe/source", "lexpipe/revalidation", "lexpipe/serving_version",
                            "lexpipe/webhooks_due", "dagster/partition", "dagster/backfill", "dagster/sensor_name",
                            "dagster/schedule_name", "dagster/partition_set", "dagster/asset_partition_range_start"})
# env var references whose value is a secret and must never be a literal in the file
SECRET_FIELDS = ("password",)
CONNECT_TIMEOUT_S = 3


@dataclass(frozen=True)
class Problem:
    kind: str  # yaml | schema | secret | env | storage | postgres | pools | tags | class
    field: str  # dotted path in the file ("" for the whole file)
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.field + ': ' if self.field else ''}{self.message}"


def asset_pools() -> set[str]:
    """The pools the definitions' assets and checks name (index, llm)."""
    from assets.definitions import defs

    pools: set[str] = set()
    for node in defs.resolve_asset_graph().asset_nodes:
        pools.update(p for p in (node.pools or ()) if p)
    return pools


def _env_refs(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(dotted field, variable name) of every ``{env: NAME}`` in the config."""
    if isinstance(node, Mapping):
        if set(node) == {"env"} and isinstance(node["env"], str):
            yield path, node["env"]
            return
        for k, v in node.items():
            yield from _env_refs(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _env_refs(v, f"{path}[{i}]")


def _literal_secrets(node: Any, path: str = "") -> Iterator[str]:
    if isinstance(node, Mapping):
        for k, v in node.items():
            here = f"{path}.{k}" if path else str(k)
            if k in SECRET_FIELDS and isinstance(v, (str, int)) and str(v):
                yield here
            elif k == "postgres_url" and isinstance(v, str) and ":" in v.split("@")[0].split("//")[-1]:
                yield here
            else:
                yield from _literal_secrets(v, here)


def _resolve(node: Any, env: Mapping[str, str]) -> Any:
    if isinstance(node, Mapping):
        if set(node) == {"env"} and isinstance(node["env"], str):
            return env.get(node["env"])
        return {k: _resolve(v, env) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(v, env) for v in node]
    return node


def load_yaml(path: Path) -> tuple[Any, list[Problem]]:
    import yaml

    try:
        text = path.read_text()
    except OSError as exc:
        return None, [Problem("yaml", "", f"cannot read {path}: {exc.strerror or exc}")]
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        return None, [Problem("yaml", "", f"bad YAML at {where}: {getattr(exc, 'problem', None) or exc}")]
    if not isinstance(data, dict):
        return None, [Problem("yaml", "", f"{path} is not a mapping of instance settings (got "
                                          f"{type(data).__name__})")]
    return data, []


def check_schema(config: Mapping[str, Any]) -> list[Problem]:
    from dagster._config import validate_config
    from dagster._core.instance.config import dagster_instance_config_schema

    result = validate_config(dagster_instance_config_schema(), dict(config))
    return [Problem("schema", ".".join(str(p) for p in _error_path(e)), e.message) for e in result.errors or []]


def _error_path(error) -> list[str]:
    stack = getattr(error, "stack", None)
    entries = getattr(stack, "entries", []) if stack is not None else []
    return [getattr(e, "field_name", None) or str(getattr(e, "list_index", "")) for e in entries]


def check_classes(config: Mapping[str, Any]) -> list[Problem]:
    from dagster._serdes.config_class import class_from_code_pointer

    problems = []
    for field in ("run_launcher", "run_coordinator", "instance_class", "compute_logs", "scheduler"):
        spec = config.get(field)
        if not isinstance(spec, Mapping) or "module" not in spec:
            continue
        try:  # the way Dagster loads it (no aliases: `dagster.core.…` fails in Dagster 1.13)
            class_from_code_pointer(spec["module"], spec.get("class", ""))
        except Exception as exc:  # noqa: BLE001 — Dagster raises CheckError, the module anything
            problems.append(Problem("class", field, f"cannot load {spec.get('module')}.{spec.get('class')}: "
                                                    f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"))
    return problems


def check_runs(config: Mapping[str, Any], pools: set[str]) -> list[Problem]:
    problems = []
    conc = config.get("concurrency") or {}
    limits = list((conc.get("runs") or {}).get("tag_concurrency_limits") or [])
    limits += ((config.get("run_coordinator") or {}).get("config") or {}).get("tag_concurrency_limits") or []
    for i, lim in enumerate(limits):
        key = lim.get("key") if isinstance(lim, Mapping) else None
        if key is not None and key not in KNOWN_RUN_TAGS:
            problems.append(Problem("tags", f"concurrency.runs.tag_concurrency_limits[{i}].key",
                                    f"no lexpipe run carries the tag {key!r}; known: {', '.join(sorted(KNOWN_RUN_TAGS))}"))
    gran = (conc.get("pools") or {}).get("granularity")
    if gran not in (None, "run"):
        problems.append(Problem("pools", "concurrency.pools.granularity",
                                f"{gran!r}: lexpipe's pools ({', '.join(sorted(pools))}) need run granularity "
                                "(op granularity leaves slot claims of killed runs behind, see dagster.yaml)"))
    return problems


def check_storage(config: Mapping[str, Any], env: Mapping[str, str], pools: set[str]) -> list[Problem]:
    storage = config.get("storage") or {}
    pg = storage.get("postgres") if isinstance(storage, Mapping) else None
    if pg is None:
        kinds = ", ".join(storage) if isinstance(storage, Mapping) and storage else "none"
        return [Problem("storage", "storage", f"the production profile keeps runs, event logs and schedules in "
                                              f"PostgreSQL (storage.postgres); this file has {kinds}")]
    resolved = _resolve(pg, env)
    if any(ref_missing for ref_missing in _missing(pg, env)):
        return []  # reported as env problems; cannot connect without them
    try:
        import psycopg2
    except ImportError:
        return [Problem("postgres", "storage.postgres", "psycopg2 is not installed (install dagster-postgres)")]
    scheme = (resolved.get("postgres_url") or "").split("://")[0] or (resolved.get("postgres_db") or {}).get(
        "scheme", "postgresql")
    try:  # the driver SQLAlchemy picks for the URL's scheme must be installed (2.1: psycopg 3 for postgresql://)
        from sqlalchemy.engine.url import make_url

        make_url(f"{scheme}://").get_dialect().import_dbapi()
    except Exception as exc:  # noqa: BLE001 — an unknown scheme or a missing driver
        return [Problem("postgres", "storage.postgres.postgres_db.scheme",
                        f"{scheme!r}: SQLAlchemy cannot load its driver ({type(exc).__name__}: {exc}); "
                        "use postgresql+psycopg2 (installed with dagster-postgres)")]
    if "postgres_url" in resolved:
        dsn: dict[str, Any] = {"dsn": resolved["postgres_url"]}
        where = "postgres_url"
    else:
        db = resolved.get("postgres_db") or {}
        dsn = {"host": db.get("hostname"), "port": db.get("port", 5432), "user": db.get("username"),
               "password": db.get("password") or None, "dbname": db.get("db_name"), **(db.get("params") or {})}
        where = f"{db.get('username')}@{db.get('hostname')}:{db.get('port', 5432)}/{db.get('db_name')}"
    try:
        conn = psycopg2.connect(connect_timeout=CONNECT_TIMEOUT_S, **dsn)
    except psycopg2.Error as exc:
        first = (str(exc).strip().splitlines() or ["no answer"])[0]
        return [Problem("postgres", "storage.postgres", f"cannot connect to {where}: {first}")]
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT to_regclass('concurrency_limits')")
            (table,) = cur.fetchone()
            held: list[str] = []
            if table is not None:
                cur.execute("SELECT concurrency_key FROM concurrency_limits ORDER BY concurrency_key")
                held = [r[0] for r in cur.fetchall()]
    finally:
        conn.close()
    unknown = [Problem("pools", f"instance pool {name!r}", f"the instance has a limit for pool {name!r}, which no "
                                                           f"asset uses (the assets use {', '.join(sorted(pools))}); "
                                                           f"`dagster instance concurrency delete {name}`?")
               for name in held if name not in pools]
    unset = [Problem("pools", f"instance pool {name!r}", f"pool {name!r} has no limit on the instance yet, so the "
                                                         "first queued runs that use it are not held back (Dagster "
                                                         "sets the default limit too late); run `lexpipe deploy init`")
             for name in sorted(pools) if name not in held]
    return unknown + unset


def _missing(node: Any, env: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(field, name) for field, name in _env_refs(node) if not env.get(name)]


def check_config(path: Path, env: Mapping[str, str] | None = None) -> list[Problem]:
    """Every problem of the instance configuration at ``path``, in the order a reader fixes them."""
    env = dict(os.environ) if env is None else env
    config, problems = load_yaml(path)
    if config is None:
        return problems
    problems += [Problem("secret", field, "a secret written in the file; use {env: NAME} (docs/deployment.md)")
                 for field in _literal_secrets(config)]
    problems += [Problem("env", field, f"environment variable {name} is not set")
                 for field, name in _missing(config, env)]
    schema = check_schema(config)
    problems += schema
    problems += check_classes(config)
    pools = asset_pools()
    problems += check_runs(config, pools)
    if not schema:
        problems += check_storage(config, env, pools)
    return problems
