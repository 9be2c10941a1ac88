"""A throwaway PostgreSQL 15 cluster for the production-profile tests (tests/deploy,
tests/lexpipe/test_deploy_check.py).

The server refuses to run as root, so under root initdb and postgres run as the ``postgres``
system user (Debian's package creates it) through ``runuser``; the data directory and the unix
socket live in a temporary directory that user owns. It listens on 127.0.0.1 on a free port with
scram-sha-256 password authentication, so the tests connect exactly as Dagster does in
production: host, port, user, password (from an env var), database. Startup measured here: initdb
about 1.5 s, server ready about 0.5 s.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN_DIRS = (Path("/usr/lib/postgresql/15/bin"), Path("/usr/local/bin"))
INSTALL_HINT = "sudo apt-get install -y postgresql (or `make postgres`)"


def pg_bin() -> Path | None:
    """The directory holding initdb, pg_ctl and postgres (PostgreSQL 15 first), None without them."""
    for d in PG_BIN_DIRS:
        if all((d / exe).exists() for exe in ("initdb", "pg_ctl", "postgres")):
            return d
    found = shutil.which("pg_ctl")
    if found and (Path(found).resolve().parent / "initdb").exists():
        return Path(found).resolve().parent
    return None


def require_pg_bin() -> Path:
    """The binaries, or a skip naming the package; under CI (``CI`` set) a failure, as the
    browser test does: CI must run ``make postgres`` (``make test`` does)."""
    found = pg_bin()
    if found is None:
        reason = f"PostgreSQL binaries not found in {', '.join(map(str, PG_BIN_DIRS))} or PATH: {INSTALL_HINT}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: CI must install PostgreSQL before the tests (`make postgres`)")
        pytest.skip(reason)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PgCluster:
    bin: Path
    root: Path
    port: int
    user: str
    password: str
    db: str
    run_as: str | None  # the system user the server runs as (None: the current one)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def env(self) -> dict[str, str]:
        """What deploy/dagster.yaml reads."""
        return {"DAGSTER_PG_HOST": "127.0.0.1", "DAGSTER_PG_PORT": str(self.port), "DAGSTER_PG_USER": self.user,
                "DAGSTER_PG_PASSWORD": self.password, "DAGSTER_PG_DB": self.db}

    def _cmd(self, *args: str) -> list[str]:
        return (["runuser", "-u", self.run_as, "--"] if self.run_as else []) + list(args)

    def start(self) -> "PgCluster":
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        self._chown(pwfile)
        subprocess.run(self._cmd(str(self.bin / "initdb"), "-D", str(self.data), "-U", self.user, "-A",
                                 "scram-sha-256", f"--pwfile={pwfile}", "-E", "UTF8", "--no-sync"),
                       check=True, capture_output=True, timeout=120)
        pwfile.unlink()
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(self._cmd(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l",
                                 str(self.root / "server.log"), "-w", "-t", "60", "start"),
                       check=True, capture_output=True, timeout=90)
        self.psql(f"CREATE DATABASE {self.db}", db="postgres")
        return self

    def stop(self) -> None:
        subprocess.run(self._cmd(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"),
                       capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)

    def _chown(self, path: Path) -> None:
        if self.run_as:
            pw = pwd.getpwnam(self.run_as)
            os.chown(path, pw.pw_uid, pw.pw_gid)

    def connect(self, db: str | None = None):
        import psycopg2

        return psycopg2.connect(host="127.0.0.1", port=self.port, user=self.user, password=self.password,
                                dbname=db or self.db, connect_timeout=5)

    def psql(self, sql: str, db: str | None = None) -> list[tuple]:
        conn = self.connect(db)
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                return cur.fetchall() if cur.description else []
        finally:
            conn.close()


def start_cluster(bin_dir: Path, db: str = "dagster") -> PgCluster:
    run_as = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.fail("running as root and there is no `postgres` user to run the server as "
                        f"({INSTALL_HINT} creates it)")
        run_as = "postgres"
    root = Path(tempfile.mkdtemp(prefix="lexpipe-pg-"))
    if run_as:
        pw = pwd.getpwnam(run_as)
        os.chown(root, pw.pw_uid, pw.pw_gid)
    cluster = PgCluster(bin=bin_dir, root=root, port=free_port(), user="lexpipe",
                        password=secrets.token_urlsafe(16), db=db, run_as=run_as)
    t = time.monotonic()
    try:
        cluster.start()
    except subprocess.CalledProcessError as exc:
        log = (root / "server.log").read_text() if (root / "server.log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {exc.stderr.decode(errors='replace')[-800:]} {log[-800:]}")
    cluster.started_in_s = time.monotonic() - t  # type: ignore[attr-defined]
    return cluster
