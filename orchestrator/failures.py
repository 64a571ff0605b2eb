"""The whole error tree of sbx.

One root class. Each leaf also subclasses the builtin it resembles, so `except TimeoutError` keeps
working. What a failure means is decided by its type, never by comparing names or messages:

- `failure_class`: the ledger's class for a run attempt that ends with this error (`infra`, `agent`,
  `unscorable`), or None when the error is not an outcome of a run at all (a config or data error: the run
  is left where it was, the command stops and says which file or flag to fix);
- `retryable`: whether a study starts a new attempt after it (only `infra`);
- `exit_code`: what an `sbx` command exits with when the error ends it (1 = the thing checked failed,
  2 = usage or config error, 3 = infrastructure).
"""

from __future__ import annotations

from typing import ClassVar


class SbxError(Exception):
    """Root of every error sbx raises on purpose."""

    retryable: ClassVar[bool] = False
    #: the ledger's failure class for a run attempt that ends with this error; None: not a run outcome
    failure_class: ClassVar[str | None] = None
    exit_code: ClassVar[int] = 2


# --- the user's input: never retried, never a run outcome; the message names the file, key or flag -------


class ConfigError(SbxError, ValueError):
    """A spec, budget, option or flag is invalid; the message names the file and the key (or the flag)."""


class DataError(SbxError, ValueError):
    """Input data is missing, malformed or too small; the message names the file and the problem."""


class ImageNotBuilt(ConfigError, LookupError):
    """An image sbx needs is not built for the current inputs: `sbx images build` makes it."""


# --- infrastructure: our side broke; the attempt is kept with counted = false and retried ---------------


class InfraError(SbxError):
    """Docker, the daemon, the host or the fleet failed; not the agent's fault."""

    retryable = True
    failure_class = "infra"
    exit_code = 3


class EngineUnavailable(InfraError, ConnectionError):
    """No Docker engine answers."""


class EndpointUnreachable(InfraError, ConnectionError):
    """A model endpoint takes no connection at its address (checked before a study runs anything on it)."""


class ImageError(InfraError):
    """An image is missing or failed to build."""


class SandboxStartTimeout(InfraError, TimeoutError):
    """The sandbox did not become ready in time."""


class CgroupError(InfraError, OSError):
    """The host could not create, read or remove a cgroup it needs for metering."""


class CopyOutError(InfraError):
    """The workspace could not be copied out because the engine or the copier failed.

    Hostile content in the workspace is never this error: it is skipped and reported in the result."""


class CopyOutTimeout(CopyOutError, TimeoutError):
    """Copying the workspace out took longer than its limit."""


class ProviderFailure(InfraError):
    """The run ended on its model provider's errors (429, quota, 5xx, timeouts, a refused connection): the
    attempt tells nothing about the agent, so it is kept uncounted and retried once the endpoint answers."""


class ScorerError(InfraError):
    """Our grader broke (the scorer runner misbehaved before the scored code ran); never the agent's failure."""


# --- the agent's own outcome: the run counts ------------------------------------------------------------


class AgentError(SbxError):
    """The agent crashed, timed out or broke a limit; the attempt counts against it."""

    failure_class = "agent"
    exit_code = 1


class UnscorableArtifact(SbxError):
    """The delivered code failed at scoring; a failed attempt, never silently dropped."""

    failure_class = "unscorable"
    exit_code = 1
    #: the scorer container's CPU seconds up to the failure, set by the scoring service when it knows them
    cpu_seconds: float | None = None

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


class IllegalTransition(SbxError, RuntimeError):
    """A run was asked to move to a state its current state cannot reach (a bug in sbx, not an outcome)."""

    exit_code = 3

    def __init__(self, current: str, target: str, why: str = "") -> None:
        message = f"illegal run transition {current} -> {target}"
        super().__init__(f"{message}: {why}" if why else message)
        self.current, self.target, self.why = current, target, why


# --- the ledger ----------------------------------------------------------------------------------------


class LedgerError(SbxError):
    """The ledger cannot be opened, or refused a read or write."""

    exit_code = 3


class LedgerBusy(LedgerError):
    """Another process held the ledger's write lock for longer than the busy timeout."""


class InvalidLedgerWrite(LedgerError, ValueError):
    """A write names an unknown field, has a value of the wrong type, or conflicts with what is recorded."""


class LedgerUnavailable(LedgerError):
    """The ledger file, or a study or table a command needs in it, does not exist (yet)."""

    exit_code = 2


class RunNotFound(LedgerUnavailable, KeyError):
    """No run has this id (or id prefix)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "no such run"


class AmbiguousRunId(LedgerUnavailable, LookupError):
    """A run id prefix matches more than one run."""


# --- the artifact store ---------------------------------------------------------------------------------


class ArtifactError(SbxError):
    """The artifact store refused an object or an id."""

    exit_code = 3


class InvalidArtifact(ArtifactError, ValueError):
    """Not a sha256 id, not a regular file, or a manifest that is not a JSON object of finite values."""


class ArtifactNotFound(ArtifactError, FileNotFoundError):
    """The artifact store holds no object with this sha256."""


# --- transcripts of model calls -------------------------------------------------------------------------


class TranscriptError(DataError):
    """A transcript file is unreadable, over a size limit, or a record breaks the format; the message says where."""


# --- interruptions: not errors, not outcomes ----------------------------------------------------------------


class Interrupted(KeyboardInterrupt):
    """sbx was told to stop (SIGINT, SIGTERM, SIGHUP; or a study stopping its runs): everything cleans up as
    for Ctrl-C, an attempt cut short ends `failed/infra` (our loss, retried), and the command exits 128 +
    the signal's number."""

    def __init__(self, signum: int = 2, why: str = "") -> None:
        import signal

        self.signum = signum
        self.signame = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else str(signum)
        super().__init__(why or f"interrupted by {self.signame}")


def failure_class_of(exc: BaseException) -> str | None:
    """The ledger's failure class for a run attempt ended by `exc`: its type's class for sbx errors; `infra`
    for anything else that escaped (an unexpected exception is our fault, never the agent's)."""
    if isinstance(exc, SbxError):
        return exc.failure_class
    return "infra"
