"""A real Neo4j on this machine, for development, the demo and tests.

No Neo4j server comes from a Python package, so Referent ships a tiny Java
program (``neo4j-launcher/``, Neo4j 5.26 LTS Community, embedded, Java 17+)
and this module builds it with Maven, starts it detached, and stops it. Only
Bolt is opened, on 127.0.0.1 only.

Auth is on, with the same credentials as ``Settings.neo4j`` defaults
(``neo4j`` / ``referent-dev``): at every start the launcher sets the user's
password to the one it is given, so a client logs in exactly as it would
against a real server, and a wrong password fails here as it would there.

Everything lives under one home directory (``Settings.neo4j_home``)::

    home/neo4j.pid    pid of the running launcher (written by start, removed by stop)
    home/neo4j.log    the launcher's stdout/stderr, appended at each start
    home/neo4j.lock   serialises start/stop between processes
    home/data/        Neo4j's databases, transaction logs and its own logs/

``start`` and ``stop`` are idempotent and safe to call from several processes
at once. POSIX only (the server is detached with ``sh`` and signalled with
SIGTERM).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import neo4j
from neo4j.exceptions import AuthError, DriverError, Neo4jError

from common.errors import ConfigurationError, DependencyError

__all__ = ["DEFAULT_JAVA_OPTIONS", "LocalNeo4j", "StartResult", "Status"]

#: JVM flags for the launcher: a modest heap, and the module openings Neo4j's own
#: start script passes (without them it cannot reach file descriptors and warns
#: on every transaction log it touches).
DEFAULT_JAVA_OPTIONS: tuple[str, ...] = (
    "-Xms256m",
    "-Xmx1g",
    "-XX:+UseG1GC",
    "-XX:+ExitOnOutOfMemoryError",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
)

_MAIN_CLASS = "referent.neo4j.Launcher"
_JAR = Path("target") / "neo4j-launcher.jar"
_LIB = Path("target") / "lib"
_STAMP = Path("target") / ".build-fingerprint"
# The launcher reads the password from here, so it never shows in `ps`.
_PASSWORD_ENV = "REFERENT_NEO4J_LAUNCHER_PASSWORD"
_PORT_SETTING = "REFERENT_NEO4J__LOCAL_PORT"
_MIN_JAVA = 17
_MIN_PASSWORD = 8  # Neo4j's dbms.security.auth_minimum_password_length
_BUILD_TIMEOUT = 30 * 60.0
_READY_LINE = "ready bolt://"
_LOG_TAIL_LINES = 40


@dataclass(frozen=True)
class StartResult:
    """What :meth:`LocalNeo4j.start` did: started a server, or found ours already up."""

    already_running: bool
    pid: int
    uri: str


@dataclass(frozen=True)
class Status:
    """Whether the launcher recorded in ``home`` is alive (the process, not a Bolt probe)."""

    running: bool
    pid: int | None
    uri: str
    home: Path


class LocalNeo4j:
    """Builds, starts, stops and reports on the local Neo4j kept in ``home``.

    Args:
        home: directory for the pid file, the log and the databases (created on start).
        port: Bolt port on 127.0.0.1 (``REFERENT_NEO4J__LOCAL_PORT``).
        launcher_dir: the Maven project of the launcher; defaults to the repository's
            ``neo4j-launcher/`` next to this package.
        user, password: the credentials the server will accept (it sets them at start).
        java_options: JVM flags; see :data:`DEFAULT_JAVA_OPTIONS`.
    """

    def __init__(self, home: Path, port: int, launcher_dir: Path | None = None, *,
                 user: str = "neo4j", password: str = "referent-dev",
                 java_options: Sequence[str] = DEFAULT_JAVA_OPTIONS) -> None:
        if not 1 <= int(port) <= 65535:
            raise ConfigurationError(f"{_PORT_SETTING} must be a TCP port (1-65535), got {port}")
        if not user or not password:
            raise ConfigurationError(
                "REFERENT_NEO4J__USER and REFERENT_NEO4J__PASSWORD must not be empty "
                "for the local Neo4j")
        if len(password) < _MIN_PASSWORD:
            raise ConfigurationError(
                f"REFERENT_NEO4J__PASSWORD must have at least {_MIN_PASSWORD} characters: "
                "Neo4j refuses shorter passwords")
        self.home = Path(home).absolute()
        self.port = int(port)
        self.launcher_dir = (Path(launcher_dir) if launcher_dir is not None
                             else Path(__file__).resolve().parent.parent / "neo4j-launcher")
        self.user = user
        self._password = password
        self.java_options = tuple(java_options)

    # -- paths ---------------------------------------------------------------------------

    @property
    def uri(self) -> str:
        """The Bolt URI clients use (``REFERENT_NEO4J__URI`` should match it)."""
        return f"bolt://127.0.0.1:{self.port}"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def pid_path(self) -> Path:
        return self.home / "neo4j.pid"

    @property
    def log_path(self) -> Path:
        return self.home / "neo4j.log"

    # -- build ---------------------------------------------------------------------------

    def build(self, log: Callable[[str], None] | None = None) -> None:
        """Builds the launcher with Maven unless the last build used the same sources.

        Up to date means: ``target/`` holds the jar and its ``lib/`` and a fingerprint
        (SHA-256 of ``pom.xml`` and ``src/``) equal to the current one; checking content
        rather than times keeps a fresh checkout from rebuilding for nothing. The first
        build downloads Neo4j (about 125 MB) into the local Maven repository.

        Raises:
            ConfigurationError: Java or Maven is missing, or the build failed (the
                message ends with the tail of Maven's output).
        """
        say = log or (lambda _msg: None)
        pom = self.launcher_dir / "pom.xml"
        if not pom.is_file():
            raise ConfigurationError(f"the Neo4j launcher project is missing: no {pom}")
        if self._is_built(self._fingerprint()):
            return
        target = self.launcher_dir / "target"
        target.mkdir(exist_ok=True)
        # Two processes building at once would trample each other's target/.
        with _flocked(target / ".build-lock"):
            fingerprint = self._fingerprint()
            if self._is_built(fingerprint):
                return
            self._maven_package(fingerprint, say)

    def _maven_package(self, fingerprint: str, say: Callable[[str], None]) -> None:
        self._java()  # a clear message about Java before Maven gives a muddled one
        mvn = shutil.which("mvn")
        if mvn is None:
            raise ConfigurationError(
                "Maven ('mvn') is needed to build the local Neo4j launcher but is not on PATH; "
                "install Maven 3.8+ or set REFERENT_NEO4J__URI to a Neo4j you run yourself")
        say(f"Building the Neo4j launcher in {self.launcher_dir} with Maven "
            "(the first build downloads about 125 MB)...")
        started = time.monotonic()
        (self.launcher_dir / _STAMP).unlink(missing_ok=True)
        try:
            proc = subprocess.run([mvn, "-q", "-B", "-Dstyle.color=never", "package"],
                                  cwd=self.launcher_dir, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  errors="replace", timeout=_BUILD_TIMEOUT, check=False)
        except subprocess.TimeoutExpired as exc:
            out = exc.output if isinstance(exc.output, str) else (exc.output or b"").decode(
                errors="replace")
            raise ConfigurationError(
                f"building the Neo4j launcher took over {_BUILD_TIMEOUT:.0f} s and was stopped; "
                f"Maven's last output:\n{_tail(out)}") from exc
        if proc.returncode != 0 or not self._artifacts_present():
            raise ConfigurationError(
                f"building the Neo4j launcher failed (mvn exit {proc.returncode}) in "
                f"{self.launcher_dir}; Maven's last output:\n{_tail(proc.stdout)}")
        (self.launcher_dir / _STAMP).write_text(fingerprint + "\n")
        say(f"Built the Neo4j launcher in {time.monotonic() - started:.0f} s.")

    # -- lifecycle -----------------------------------------------------------------------

    def start(self, timeout: float = 180.0, *,
              log: Callable[[str], None] | None = None) -> StartResult:
        """Starts the server unless ours is already up; returns once Bolt answers.

        ``timeout`` bounds the wait for Bolt after the JVM is launched (a build, if one
        is needed, comes before and is not counted). ``log`` receives progress lines.

        Raises:
            ConfigurationError: the port is taken by another program, our server runs on
                another port, or Java/Maven/the build is at fault.
            DependencyError: the server exited during start-up or did not answer in time
                (the message ends with the tail of ``home/neo4j.log``); a server that timed
                out is stopped again.
        """
        say = log or (lambda _msg: None)
        self.home.mkdir(parents=True, exist_ok=True)
        with self._lock():
            pid = self._recorded_pid()
            if pid is not None:
                running_port = _port_of(_cmdline(pid))
                if running_port is not None and running_port != self.port:
                    raise ConfigurationError(
                        f"the local Neo4j in {self.home} already runs on port {running_port}, "
                        f"not {self.port} ({_PORT_SETTING}); stop it first")
                self._wait_for_bolt(pid, time.monotonic() + timeout, log_offset=None)
                return StartResult(already_running=True, pid=pid, uri=self.uri)
            self.pid_path.unlink(missing_ok=True)  # stale, if it was there
            if _port_open(self.port):
                raise ConfigurationError(self._port_taken_message())
            self.build(log=say)
            java = self._java()
            say(f"Starting Neo4j on {self.uri} (data in {self.data_dir})...")
            pid, offset = self._spawn(java)
            try:
                self._wait_for_bolt(pid, time.monotonic() + timeout, log_offset=offset)
            except BaseException:
                self._terminate(pid, 10.0)
                self.pid_path.unlink(missing_ok=True)
                raise
            return StartResult(already_running=False, pid=pid, uri=self.uri)

    def stop(self, timeout: float = 30.0) -> bool:
        """Stops our server: SIGTERM (a clean shutdown), SIGKILL after ``timeout`` seconds.

        Returns False when nothing of ours was running (a stale pid file is removed).
        """
        if not self.home.is_dir():
            return False
        with self._lock():
            pid = self._recorded_pid()
            if pid is None:
                self.pid_path.unlink(missing_ok=True)
                return False
            self._terminate(pid, timeout)
            self.pid_path.unlink(missing_ok=True)
            return True

    def status(self) -> Status:
        """Reports whether the launcher named by the pid file is alive. Changes nothing."""
        pid = self._recorded_pid()
        return Status(running=pid is not None, pid=pid, uri=self.uri, home=self.home)

    # -- internals -----------------------------------------------------------------------

    def _fingerprint(self) -> str:
        digest = hashlib.sha256()
        files = [self.launcher_dir / "pom.xml"]
        src = self.launcher_dir / "src"
        if src.is_dir():
            files += sorted(p for p in src.rglob("*") if p.is_file())
        for path in files:
            digest.update(path.relative_to(self.launcher_dir).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
        return digest.hexdigest()

    def _artifacts_present(self) -> bool:
        lib = self.launcher_dir / _LIB
        return (self.launcher_dir / _JAR).is_file() and lib.is_dir() and any(lib.glob("neo4j-*.jar"))

    def _is_built(self, fingerprint: str) -> bool:
        try:
            recorded = (self.launcher_dir / _STAMP).read_text().strip()
        except OSError:
            return False
        return recorded == fingerprint and self._artifacts_present()

    def _java(self) -> str:
        """The java executable (JAVA_HOME first, then PATH), checked to be Java 17+."""
        java_home = os.environ.get("JAVA_HOME")
        candidate = Path(java_home) / "bin" / "java" if java_home else None
        java = str(candidate) if candidate and candidate.is_file() else shutil.which("java")
        if java is None:
            raise ConfigurationError(
                f"Java {_MIN_JAVA}+ is needed to run the local Neo4j but no 'java' was found "
                "(JAVA_HOME or PATH); install a JDK 17 or 21, or set REFERENT_NEO4J__URI to a "
                "Neo4j you run yourself")
        try:
            out = subprocess.run([java, "-version"], stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, errors="replace",
                                 timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ConfigurationError(f"could not run '{java} -version': {exc}") from exc
        match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
        if match:
            major = int(match.group(1))
            if major == 1 and match.group(2):  # "1.8.0_x" style
                major = int(match.group(2))
            if major < _MIN_JAVA:
                raise ConfigurationError(
                    f"the local Neo4j (5.26) needs Java {_MIN_JAVA}+, but {java} is Java {major}; "
                    "install a JDK 17 or 21 and point JAVA_HOME at it")
        return java

    def _spawn(self, java: str) -> tuple[int, int]:
        """Launches the JVM detached from us; returns its pid and where its log starts.

        ``sh`` forks the JVM into the background and exits, so the server is not our
        child: it outlives this process, leaves no zombie behind for us to reap, and
        sits in its own session, away from the terminal's Ctrl-C.
        """
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(f"\n---- {time.strftime('%Y-%m-%d %H:%M:%S%z')} starting Neo4j on "
                     f"{self.uri} ----\n")
            offset = fh.tell()
        command = [java, *self.java_options, "-cp", str(self.launcher_dir / _JAR), _MAIN_CLASS,
                   "--port", str(self.port), "--data-dir", str(self.data_dir),
                   "--user", self.user]
        env = dict(os.environ)
        env[_PASSWORD_ENV] = self._password
        script = 'log=$1; shift; "$@" </dev/null >>"$log" 2>&1 & echo $!'
        try:
            proc = subprocess.run(["sh", "-c", script, "sh", str(self.log_path), *command],
                                  cwd=self.home, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, start_new_session=True,
                                  timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DependencyError(f"could not launch the local Neo4j: {exc}") from exc
        try:
            pid = int(proc.stdout.strip())
        except ValueError as exc:
            raise DependencyError(
                f"could not launch the local Neo4j: {proc.stderr.strip() or 'no pid'}") from exc
        tmp = self.pid_path.with_suffix(".pid.tmp")
        tmp.write_text(f"{pid}\n")
        tmp.replace(self.pid_path)
        return pid, offset

    def _wait_for_bolt(self, pid: int, deadline: float, log_offset: int | None) -> None:
        """Waits until Bolt accepts our credentials, or fails with the log's tail.

        For a server we just launched (``log_offset`` given), the probe waits for the
        launcher's ``ready`` line: Bolt opens a moment before the password is set, and
        probing early would count failed logins against the user.
        """
        last_error: Exception | None = None
        while True:
            if not _alive(pid):
                tail = self._log_tail(log_offset)
                if "Address already in use" in tail:
                    raise ConfigurationError(f"{self._port_taken_message()}\n{tail}")
                raise DependencyError(
                    f"the local Neo4j (pid {pid}) exited during start-up; "
                    f"last lines of {self.log_path}:\n{tail}")
            ready = log_offset is None or _READY_LINE in self._log_since(log_offset)
            if ready:
                try:
                    self._verify_connectivity()
                    return
                except AuthError as exc:
                    if log_offset is None:
                        raise ConfigurationError(
                            f"the local Neo4j on {self.uri} rejects user '{self.user}' with the "
                            "configured REFERENT_NEO4J__PASSWORD; it was started with other "
                            "credentials: stop it and start it again") from exc
                    last_error = exc
                except (DriverError, Neo4jError, OSError) as exc:
                    last_error = exc
            if time.monotonic() >= deadline:
                reason = f" (last error: {last_error})" if last_error else ""
                raise DependencyError(
                    f"the local Neo4j (pid {pid}) did not answer on {self.uri} in time{reason}; "
                    f"last lines of {self.log_path}:\n{self._log_tail(log_offset)}")
            time.sleep(0.25 if ready else 0.5)

    def _verify_connectivity(self) -> None:
        with neo4j.GraphDatabase.driver(self.uri, auth=(self.user, self._password),
                                        connection_timeout=5.0,
                                        max_connection_pool_size=1) as driver:
            driver.verify_connectivity()

    def _terminate(self, pid: int, timeout: float) -> None:
        """SIGTERM, wait up to ``timeout`` s, then SIGKILL and wait a little more."""
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return
            end = time.monotonic() + wait
            while time.monotonic() < end:
                if not _alive(pid):
                    return
                time.sleep(0.1)
        if _alive(pid):
            raise DependencyError(f"the local Neo4j (pid {pid}) survived SIGKILL")

    def _recorded_pid(self) -> int | None:
        """The pid from the pid file if that process is alive and is our launcher."""
        try:
            pid = int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return None
        if pid <= 0 or not _alive(pid):
            return None
        cmdline = _cmdline(pid)
        # A recycled pid belongs to some other program: then ours is gone.
        if cmdline is not None and (_MAIN_CLASS not in cmdline
                                    or str(self.data_dir) not in cmdline):
            return None
        return pid

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        return _flocked(self.home / "neo4j.lock")

    def _port_taken_message(self) -> str:
        return (f"port {self.port} on 127.0.0.1 is already in use by another program, so the "
                f"local Neo4j cannot listen there; choose another port with {_PORT_SETTING} "
                "(and point REFERENT_NEO4J__URI at it), or stop that program")

    def _log_since(self, offset: int) -> str:
        try:
            with self.log_path.open("rb") as fh:
                fh.seek(offset)
                return fh.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def _log_tail(self, offset: int | None) -> str:
        text = self._log_since(offset or 0)
        return _tail(text) or "(the log is empty)"


@contextlib.contextmanager
def _flocked(path: Path) -> Iterator[None]:
    """Holds an exclusive advisory lock on ``path`` (created if missing)."""
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _tail(text: str, lines: int = _LOG_TAIL_LINES) -> str:
    """The last lines of a log, without colour codes or Java stack frames (they bury the cause)."""
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    kept = [line for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith(("at ", "..."))]
    return "\n".join(kept[-lines:])


def _alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie (an exited process nobody reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        pass
    try:
        out = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True,
                             text=True, timeout=10, check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return True
    return bool(out) and not out.startswith("Z")


def _cmdline(pid: int) -> list[str] | None:
    """The process's argv, or None if it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        return [part.decode(errors="replace") for part in raw.split(b"\0") if part]
    except OSError:
        pass
    try:
        out = subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True,
                             text=True, timeout=10, check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.split() if out else None


def _port_of(cmdline: list[str] | None) -> int | None:
    if not cmdline:
        return None
    for flag, value in zip(cmdline, cmdline[1:]):
        if flag == "--port" and value.isdigit():
            return int(value)
    return None


def _port_open(port: int) -> bool:
    """True if something accepts TCP connections on 127.0.0.1:port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False
