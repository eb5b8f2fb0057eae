"""The fleet's rate limit and model-call budget, counted in Postgres so that they hold across every worker.

A limit kept in each process multiplies with the number of processes; these are kept in two small
tables of the job database and every decision is one short transaction, serialised on the fleet's
bucket row (``SELECT ... FOR UPDATE``), so two workers can never both take the last token or the last
calls of the budget:

- **Rate** (``max_audits_per_minute``): a token bucket refilled continuously at that rate and holding a
  tenth of a minute's worth (at least one), like the serving side's limiter. Time is the database
  server's clock, so hosts with skewed clocks agree.
- **Budget** (``max_model_calls_per_hour``): a ledger of attempts. An attempt reserves the expected
  number of calls (the mean of the settled attempts of the last hour, or ``initial_estimate``) before it
  starts and settles the real number when it ends; the calls of the last hour, reservations included,
  may not exceed the budget. An attempt whose worker died keeps its reservation: the fleet errs on the
  side of spending less.

When either says no, :meth:`FleetLimits.acquire` returns how long to wait; the worker hands the job
back (the attempt is not counted) and re-publishes its task with that delay. The serving side keeps
its own admission (``OnlineAuditor``'s limiter and budget skip and count); this is the fleet's hard cap
on what the audit workers spend.
"""

from __future__ import annotations

import math
from typing import Any

from ariadne_lc.distributed._postgres import with_retries
from ariadne_lc.errors import ConfigurationError

__all__ = ["FleetLimits"]

_HOUR = 3600.0
_MIN_WAIT = 1.0
_MAX_WAIT = 300.0
_NOW = "SELECT extract(epoch FROM clock_timestamp())::float8"


class FleetLimits:
    """Fleet-wide rate limit and model-call budget of the audit workers (see the module docstring).

    Args:
        pool: A ``psycopg_pool.ConnectionPool`` on the job database (:func:`~ariadne_lc.distributed.open_pool`).
        name: Which fleet: workers sharing a name share the limits.
        max_audits_per_minute: Audits started per minute, fleet-wide; ``None`` for no limit.
        max_model_calls_per_hour: Model calls spent by audits in any hour, fleet-wide; ``None`` for none.
        initial_estimate: Calls an audit is expected to make before any has finished.
    """

    def __init__(
        self,
        pool: Any,
        *,
        name: str = "default",
        max_audits_per_minute: float | None = None,
        max_model_calls_per_hour: int | None = None,
        initial_estimate: float = 4.0,
    ) -> None:
        if max_audits_per_minute is not None and not max_audits_per_minute > 0:
            raise ConfigurationError(f"max_audits_per_minute must be positive, got {max_audits_per_minute!r}")
        if max_model_calls_per_hour is not None and not max_model_calls_per_hour > 0:
            raise ConfigurationError(f"max_model_calls_per_hour must be positive, got {max_model_calls_per_hour!r}")
        if not initial_estimate > 0:
            raise ConfigurationError(f"initial_estimate must be positive, got {initial_estimate!r}")
        self._pool = pool
        self.name = name
        self.rate = None if max_audits_per_minute is None else float(max_audits_per_minute) / 60.0
        self.capacity = None if max_audits_per_minute is None else max(1.0, float(max_audits_per_minute) / 10.0)
        self.budget = max_model_calls_per_hour
        self.initial_estimate = float(initial_estimate)

    @property
    def active(self) -> bool:
        """Whether any limit is set (without one, :meth:`acquire` always admits)."""
        return self.rate is not None or self.budget is not None

    def acquire(self, job_id: str, attempt: int) -> float:
        """Admit attempt ``attempt`` of ``job_id``: ``0.0`` when it may start now (its token is taken and
        its calls reserved), else the seconds to wait before asking again."""
        if not self.active:
            return 0.0
        return with_retries(lambda: self._acquire(job_id, attempt), "taking a fleet rate/budget token")

    def _acquire(self, job_id: str, attempt: int) -> float:
        with self._pool.connection() as conn, conn.transaction():
            now = float(conn.execute(_NOW).fetchone()[0])
            conn.execute(
                "INSERT INTO ariadne_fleet_bucket (name, tokens, updated_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO NOTHING",
                (self.name, self.capacity or 0.0, now),
            )
            tokens, updated = conn.execute(
                "SELECT tokens, updated_at FROM ariadne_fleet_bucket WHERE name = %s FOR UPDATE", (self.name,)
            ).fetchone()
            reserve = 0
            if self.budget is not None:
                spent, mean, oldest = conn.execute(
                    "SELECT COALESCE(SUM(calls), 0), AVG(calls) FILTER (WHERE settled), MIN(at) "
                    "FROM ariadne_fleet_spend WHERE name = %s AND at > %s",
                    (self.name, now - _HOUR),
                ).fetchone()
                reserve = max(1, math.ceil(float(mean) if mean is not None else self.initial_estimate))
                if int(spent) + reserve > self.budget:
                    wait = (float(oldest) + _HOUR - now) if oldest is not None else _MAX_WAIT
                    return min(_MAX_WAIT, max(_MIN_WAIT, wait))
            if self.rate is not None and self.capacity is not None:
                tokens = min(self.capacity, float(tokens) + (now - float(updated)) * self.rate)
                if tokens < 1.0:
                    conn.execute(
                        "UPDATE ariadne_fleet_bucket SET tokens = %s, updated_at = %s WHERE name = %s",
                        (tokens, now, self.name),
                    )
                    return min(_MAX_WAIT, max(0.05, (1.0 - tokens) / self.rate))
                conn.execute(
                    "UPDATE ariadne_fleet_bucket SET tokens = %s, updated_at = %s WHERE name = %s",
                    (tokens - 1.0, now, self.name),
                )
            if self.budget is not None:
                conn.execute(
                    "INSERT INTO ariadne_fleet_spend (name, job_id, attempt, calls, settled, at) "
                    "VALUES (%s, %s, %s, %s, false, %s) ON CONFLICT (name, job_id, attempt) DO UPDATE "
                    "SET calls = EXCLUDED.calls, settled = false, at = EXCLUDED.at",
                    (self.name, job_id, attempt, reserve, now),
                )
        return 0.0

    def settle(self, job_id: str, attempt: int, calls: int) -> None:
        """Replace the reservation of an attempt that ended by the ``calls`` it really made."""
        if self.budget is None:
            return

        def write() -> None:
            with self._pool.connection() as conn:
                conn.execute(
                    "UPDATE ariadne_fleet_spend SET calls = %s, settled = true, "
                    f"at = ({_NOW}) WHERE name = %s AND job_id = %s AND attempt = %s",
                    (int(calls), self.name, job_id, attempt),
                )

        with_retries(write, "settling a fleet budget reservation")

    def cancel(self, job_id: str, attempt: int) -> None:
        """Drop the reservation of an attempt that did not run (handed back before its audit)."""
        if self.budget is None:
            return

        def write() -> None:
            with self._pool.connection() as conn:
                conn.execute(
                    "DELETE FROM ariadne_fleet_spend WHERE name = %s AND job_id = %s AND attempt = %s AND NOT settled",
                    (self.name, job_id, attempt),
                )

        with_retries(write, "cancelling a fleet budget reservation")

    def spent(self) -> int:
        """Model calls of the last hour, fleet-wide, reservations of unfinished attempts included."""

        def read() -> int:
            with self._pool.connection() as conn:
                row = conn.execute(
                    f"SELECT COALESCE(SUM(calls), 0) FROM ariadne_fleet_spend WHERE name = %s AND at > ({_NOW}) - %s",
                    (self.name, _HOUR),
                ).fetchone()
            return int(row[0])

        return with_retries(read, "reading the fleet budget")
