"""A local git repository read through the ``git`` command: the only way the gesetze connector
touches the repository.

Why the command and not a library: ``git`` is on every machine that runs lexpipe (Debian's
package), reads packfiles faster than any Python binding, and ``cat-file --batch`` streams
thousands of blobs through one process (6,636 front matters in ~0.4 s). Nothing here writes to
the repository except :meth:`GitRepo.clone_or_fetch`.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

# no user or system config (a developer's pager, hooks or credential helper must not apply), no prompts
_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull, "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C"}


class GitError(RuntimeError):
    """A git command failed; the message names the repository, the command and git's error."""


@dataclass(frozen=True)
class GitRepo:
    path: Path

    def run(self, *args: str, check: bool = True, input: bytes | None = None) -> bytes:
        res = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, input=input,
                             env={**os.environ, **_ENV})
        if check and res.returncode != 0:
            raise GitError(f"{self.path}: git {' '.join(args[:4])}{' …' if len(args) > 4 else ''} failed "
                           f"({res.returncode}): {res.stderr.decode(errors='replace').strip()[:500]}")
        return res.stdout

    def text(self, *args: str) -> str:
        return self.run(*args).decode("utf-8", errors="replace")

    def is_repo(self) -> bool:
        return (self.path / ".git").exists() or (self.path / "HEAD").exists() and (self.path / "objects").is_dir()

    @classmethod
    def clone_or_fetch(cls, url: str, path: Path, *, branch: str | None = None) -> "GitRepo":
        """A clone of ``url`` at ``path`` (a local path, a bundle file or a remote URL), fetched
        again when it exists. The work tree is never used: everything is read from objects."""
        path = Path(path)
        repo = cls(path)
        if repo.is_repo():
            repo.run("fetch", "-q", "--tags", url, f"+{branch or 'HEAD'}:refs/remotes/origin/source")
            return repo
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.cloning")
        subprocess.run(["rm", "-rf", str(tmp)], check=False)
        res = subprocess.run(["git", "clone", "-q", "--no-checkout", *(["-b", branch] if branch else []), url, str(tmp)],
                             capture_output=True, env={**os.environ, **_ENV})
        if res.returncode != 0:
            raise GitError(f"git clone {url} failed: {res.stderr.decode(errors='replace').strip()[:500]}")
        os.replace(tmp, path)  # a clone appears whole or not at all
        repo.run("update-ref", "refs/remotes/origin/source", "HEAD")
        return repo

    def resolve(self, ref: str) -> str:
        return self.text("rev-parse", "--verify", f"{ref}^{{commit}}").strip()

    def first_parent(self, head: str) -> list[str]:
        """Commit ids along the first-parent line up to ``head``, oldest first."""
        return self.text("rev-list", "--first-parent", "--reverse", head).split()

    def show(self, commit: str, path: str) -> bytes | None:
        """The blob of ``path`` at ``commit``; None when the commit has no such file."""
        res = subprocess.run(["git", "-C", str(self.path), "cat-file", "blob", f"{commit}:{path}"],
                             capture_output=True, env={**os.environ, **_ENV})
        return res.stdout if res.returncode == 0 else None

    def blobs(self, specs: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """``(spec, bytes)`` for each ``<commit>:<path>`` spec, streamed through one
        ``git cat-file --batch`` (None for a missing object)."""
        specs = list(specs)
        if not specs:
            return
        proc = subprocess.Popen(["git", "-C", str(self.path), "cat-file", "--batch"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, env={**os.environ, **_ENV})
        assert proc.stdin is not None and proc.stdout is not None
        import threading

        def feed() -> None:
            try:
                for s in specs:
                    proc.stdin.write(s.encode() + b"\n")
                proc.stdin.close()
            except BrokenPipeError:
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for spec in specs:
                header = proc.stdout.readline()
                if not header:
                    raise GitError(f"{self.path}: git cat-file --batch ended early at {spec}")
                parts = header.split()
                if len(parts) == 2 and parts[1] == b"missing":
                    yield spec, None
                    continue
                size = int(parts[2])
                data = proc.stdout.read(size)
                proc.stdout.read(1)  # the newline after the object
                yield spec, data
        finally:
            writer.join()
            proc.stdout.close()
            proc.wait()

    def ls_files(self, commit: str) -> list[str]:
        """Every file path at ``commit``."""
        return [p for p in self.text("ls-tree", "-r", "--name-only", commit).split("\n") if p]

    def changed(self, old: str | None, new: str) -> list[tuple[str, str]]:
        """``(status, path)`` of every file that differs between ``old`` and ``new`` (``A``, ``M``,
        ``D``; renames as a delete and an add), or every file of ``new`` as added when ``old`` is None."""
        if old is None:
            return [("A", p) for p in self.text("ls-tree", "-r", "--name-only", new).split("\n") if p]
        out = self.text("diff", "--name-status", "--no-renames", old, new)
        rows = []
        for line in out.split("\n"):
            if line:
                status, path = line.split("\t", 1)
                rows.append((status[0], path))
        return rows

    def commit_info(self, commits: Iterable[str]) -> dict[str, dict[str, str]]:
        """Author date (strict ISO, with offset), subject and body of each commit."""
        commits = list(commits)
        if not commits:
            return {}
        fmt = "%H%x00%aI%x00%s%x00%b%x01"
        out = self.text("show", "-s", f"--format={fmt}", "--no-walk=unsorted", *commits)
        info = {}
        for rec in out.split("\x01"):
            rec = rec.strip("\n")
            if not rec:
                continue
            sha, date, subject, body = rec.split("\x00", 3)
            info[sha] = {"date": date, "subject": subject, "body": body.strip()}
        return info
