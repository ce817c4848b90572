"""The trace store: SQLite (WAL), a versioned schema, one row per attempt, written once.

Also holds the response cache (every paid LLM answer, keyed by the hash of its whole request),
so that resuming a run never pays for the same call twice. Readable with plain SQL.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from traces.records import Attempt

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, config TEXT NOT NULL, created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(id), task_id TEXT NOT NULL, arm TEXT NOT NULL,
    sample INTEGER NOT NULL, round INTEGER NOT NULL, trial INTEGER NOT NULL DEFAULT 0,
    parent_id INTEGER REFERENCES attempts(id), mode TEXT NOT NULL, decision TEXT NOT NULL,
    prompt TEXT, response TEXT, code TEXT, code_hash TEXT,
    verdict TEXT, speedup REAL, result TEXT, feedback TEXT,
    model TEXT, tokens_in INTEGER, tokens_out INTEGER, cost_usd REAL, latency_s REAL,
    cached_response INTEGER, eval_s REAL, started_at REAL, finished_at REAL,
    UNIQUE (run_id, task_id, arm, sample, round, trial)
);
CREATE INDEX IF NOT EXISTS attempts_chain ON attempts (run_id, task_id, arm, sample);
CREATE TRIGGER IF NOT EXISTS attempts_are_never_rewritten BEFORE UPDATE ON attempts
BEGIN SELECT RAISE(ABORT, 'attempts are never rewritten'); END;
CREATE TABLE IF NOT EXISTS chain_ends (
    run_id TEXT NOT NULL REFERENCES runs(id), task_id TEXT NOT NULL, arm TEXT NOT NULL, sample INTEGER NOT NULL,
    attempts INTEGER NOT NULL, reason TEXT NOT NULL, finished_at REAL NOT NULL,
    PRIMARY KEY (run_id, task_id, arm, sample)
);
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY, request TEXT NOT NULL, response TEXT NOT NULL, created_at REAL NOT NULL
);
"""


class StoreError(Exception):
    """A trace store that cannot be used: newer schema, not a store, or a conflicting run."""


class TraceStore:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30,
                                       isolation_level=None)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA busy_timeout=30000")
            # WAL with synchronous=NORMAL: a commit survives the process being killed (kill -9);
            # only a power loss could take the last few back.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._check_version()
            self._db.executescript(SCHEMA)
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable trace store ({exc})") from exc

    def _check_version(self) -> None:
        has_meta = self._db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if not has_meta:
            return
        row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row and int(row[0]) > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: trace store schema {row[0]} is newer than this agentloop understands "
                             f"({SCHEMA_VERSION}); upgrade agentloop to read it")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _write(self, sql: str, params: tuple | dict) -> sqlite3.Cursor:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                cursor = self._db.execute(sql, params)
                self._db.execute("COMMIT")
                return cursor
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _read(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    # runs ----------------------------------------------------------------------------------------
    def ensure_run(self, run_id: str, config: dict[str, Any]) -> bool:
        """Create the run, or confirm it exists with the same config. True when it already existed."""
        text = json.dumps(config, sort_keys=True)
        existing = self._read("SELECT config FROM runs WHERE id = ?", (run_id,))
        if existing:
            if existing[0]["config"] != text:
                raise StoreError(f"run {run_id!r} exists in {self.path} with a different configuration")
            return True
        self._write("INSERT INTO runs VALUES (?, ?, ?)", (run_id, text, time.time()))
        return False

    def runs(self) -> list[dict[str, Any]]:
        rows = self._read("""SELECT r.id, r.created_at, r.config, COUNT(a.id) AS attempts,
                                    SUM(a.verdict = 'CORRECT') AS correct, SUM(a.cost_usd) AS cost_usd
                             FROM runs r LEFT JOIN attempts a ON a.run_id = r.id GROUP BY r.id ORDER BY r.created_at""")
        return [dict(r) for r in rows]

    def run_config(self, run_id: str) -> dict[str, Any]:
        rows = self._read("SELECT config FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise StoreError(f"no run {run_id!r} in {self.path}")
        return json.loads(rows[0]["config"])

    # chain ends ------------------------------------------------------------------------------------
    def record_chain_end(self, run_id: str, task_id: str, arm: str, sample: int, attempts: int, reason: str) -> None:
        """How a chain ended (its latest ending, if a resumed run ends it again): what lets the
        figures count chains that never produced an attempt."""
        self._write("INSERT OR REPLACE INTO chain_ends VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (run_id, task_id, arm, sample, attempts, reason, time.time()))

    def chains_without_attempts(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._read("""SELECT task_id, arm, sample, reason FROM chain_ends c WHERE run_id = ? AND NOT EXISTS
                             (SELECT 1 FROM attempts a WHERE a.run_id = c.run_id AND a.task_id = c.task_id
                              AND a.arm = c.arm AND a.sample = c.sample)
                             ORDER BY task_id, arm, sample""", (run_id,))
        return [dict(r) for r in rows]

    # attempts --------------------------------------------------------------------------------------
    def add_attempt(self, attempt: Attempt) -> int:
        row = attempt.row()
        columns = ", ".join(row)
        marks = ", ".join(f":{k}" for k in row)
        cursor = self._write(f"INSERT INTO attempts ({columns}) VALUES ({marks})", row)
        attempt.id = cursor.lastrowid
        return attempt.id

    def chain(self, run_id: str, task_id: str, arm: str, sample: int) -> list[Attempt]:
        rows = self._read("""SELECT * FROM attempts WHERE run_id = ? AND task_id = ? AND arm = ? AND sample = ?
                             ORDER BY round, trial""", (run_id, task_id, arm, sample))
        return [Attempt.from_row(dict(r)) for r in rows]

    def attempts(self, run_id: str | None = None) -> list[Attempt]:
        if run_id is None:
            rows = self._read("SELECT * FROM attempts ORDER BY id")
        else:
            rows = self._read("SELECT * FROM attempts WHERE run_id = ? ORDER BY id", (run_id,))
        return [Attempt.from_row(dict(r)) for r in rows]

    def iter_rows(self, sql: str, params: tuple = ()) -> Iterator[dict[str, Any]]:
        for row in self._read(sql, params):
            yield dict(row)

    # response cache --------------------------------------------------------------------------------
    def cached_response(self, key: str) -> dict[str, Any] | None:
        rows = self._read("SELECT response FROM responses WHERE key = ?", (key,))
        return json.loads(rows[0]["response"]) if rows else None

    def put_response(self, key: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        self._write("INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?)",
                    (key, json.dumps(request, sort_keys=True), json.dumps(response), time.time()))

    def count_responses(self) -> int:
        return self._read("SELECT COUNT(*) AS n FROM responses")[0]["n"]
