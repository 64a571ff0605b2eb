"""The whole error tree of sbx.

One root class. Each leaf also subclasses the builtin it resembles, so `except TimeoutError` keeps
working. Whether a failure is retried is a class attribute, checked with isinstance, never a list of
names compared as strings.
"""

from __future__ import annotations

from typing import ClassVar


class SbxError(Exception):
    """Root of every error sbx raises on purpose."""

    retryable: ClassVar[bool] = False
    #: the ledger's failure class for a run that ends with this error
    failure_class: ClassVar[str] = "infra"


class ConfigError(SbxError, ValueError):
    """A spec, budget or option is invalid; the message names the file and the key."""

    failure_class = "config"


class DataError(SbxError, ValueError):
    """Input data is missing, malformed or too small; the message names the file and the problem."""

    failure_class = "config"


# --- infrastructure: our side broke; the attempt is kept with counted = false and retried ---------------


class InfraError(SbxError):
    """Docker, the daemon, the host or the fleet failed; not the agent's fault."""

    retryable = True
    failure_class = "infra"


class EngineUnavailable(InfraError, ConnectionError):
    """No Docker engine answers."""


class ImageError(InfraError):
    """An image is missing or failed to build."""


class SandboxStartTimeout(InfraError, TimeoutError):
    """The sandbox did not become ready in time."""


class CgroupError(InfraError, OSError):
    """The host could not create, read or remove a cgroup it needs for metering."""


class NodeLost(InfraError):
    """A fleet node died while it held the run."""


class CopyOutError(InfraError):
    """The workspace could not be copied out (engine error, copier crash, a stream past its cap).

    Hostile content in the workspace is never this error: it is skipped and reported in the result."""


class CopyOutTimeout(CopyOutError, TimeoutError):
    """Copying the workspace out took longer than its limit."""


# --- the agent's own outcome: the run counts ------------------------------------------------------------


class AgentError(SbxError):
    """The agent crashed, timed out or broke a limit; the attempt counts against it."""

    failure_class = "agent"


class BudgetExceeded(AgentError):
    """A metered budget was crossed."""

    def __init__(self, meter: str, used: float, limit: float) -> None:
        super().__init__(f"{meter} budget exceeded: used {used:.1f} of {limit:.1f}")
        self.meter, self.used, self.limit = meter, used, limit


class WallClockExceeded(AgentError, TimeoutError):
    """The run hit its wall-clock limit."""


# --- scoring -------------------------------------------------------------------------------------------


class UnscorableArtifact(SbxError):
    """The delivered code failed at scoring; a failed attempt, never silently dropped."""

    failure_class = "unscorable"

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


class ScorerError(SbxError):
    """Our grader broke; never recorded as the agent's failure."""

    retryable = True
    failure_class = "infra"


class IllegalTransition(SbxError, RuntimeError):
    """A run was asked to move to a state its current state cannot reach."""

    def __init__(self, current: str, target: str, why: str = "") -> None:
        message = f"illegal run transition {current} -> {target}"
        super().__init__(f"{message}: {why}" if why else message)
        self.current, self.target, self.why = current, target, why


# --- the ledger ----------------------------------------------------------------------------------------


class LedgerError(SbxError):
    """The ledger cannot be opened, or refused a read or write."""


class InvalidLedgerWrite(LedgerError, ValueError):
    """A write names an unknown field, has a value of the wrong type, or conflicts with what is recorded."""


class RunNotFound(LedgerError, KeyError):
    """No run has this id (or id prefix)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "no such run"


class AmbiguousRunId(LedgerError, LookupError):
    """A run id prefix matches more than one run."""


# --- the artifact store ---------------------------------------------------------------------------------


class ArtifactError(SbxError):
    """The artifact store refused an object or an id."""


class InvalidArtifact(ArtifactError, ValueError):
    """Not a sha256 id, not a regular file, or a manifest that is not a JSON object of finite values."""


class ArtifactNotFound(ArtifactError, FileNotFoundError):
    """The artifact store holds no object with this sha256."""


class LedgerUnavailable(LedgerError):
    """The ledger file, or a table a command needs in it, does not exist (yet)."""

    failure_class = "config"
