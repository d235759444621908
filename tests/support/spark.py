"""A throwaway Spark Thrift Server for the tests and benchmarks, reached the way a cluster is reached.

`start_thrift_server` runs the pip pyspark's own `spark-submit` (it ships the
Hive and thrift-server jars) with HiveThriftServer2 on 127.0.0.1 and a free
port, a Derby metastore and a warehouse folder inside `base_dir`, and waits
until one session has run a statement (tests/conftest.py's `spark_server`
fixture; bench/spark_build.py). A server that takes the port but does not
answer that session in time is stopped and started once more. Without Java or pyspark the Spark tests are skipped
locally and fail under CI (tests/support/environment.py).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from operations.spark import java_executable
from tests.support.environment import free_port

STARTUP_TIMEOUT_S = 180
FIRST_SESSION_TIMEOUT_S = 180
STARTS = 2

# One session, one statement: the first session creates the Derby metastore.
# dbt opens its first two sessions at once; on one CI run (2026-11-29) those
# two never got an answer and the build waited until the test's timeout.
FIRST_SESSION = """
import sys
from pyhive import hive
cursor = hive.connect(host="127.0.0.1", port=int(sys.argv[1]), username="tests").cursor()
cursor.execute("show databases")
cursor.fetchall()
"""


@dataclass
class SparkServer:
    base_dir: Path
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    def environment(self, spark_warehouse: Path) -> dict[str, str]:
        """What `feedback-analytics build --target spark` needs to use this server and folder."""
        return {
            "FEEDBACK_SPARK_HOST": "127.0.0.1",
            "FEEDBACK_SPARK_PORT": str(self.port),
            "FEEDBACK_SPARK_USER": "tests",
            "FEEDBACK_SPARK_WAREHOUSE": str(spark_warehouse),
        }


def spark_home() -> Path | None:
    try:
        import pyspark
    except ImportError:
        return None
    return Path(pyspark.__file__).parent


def missing_spark_reason() -> str | None:
    if spark_home() is None:
        return "pyspark is not installed (pip install -e '.[spark]')"
    if java_executable() is None:
        return "no Java for Spark (apt-get install -y openjdk-17-jre-headless, or set JAVA_HOME)"
    return None


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def _first_session_failure(port: int) -> str | None:
    """Why one session with one statement failed on the server at `port`; None when it ran."""
    try:
        session = subprocess.run(
            [sys.executable, "-c", FIRST_SESSION, str(port)],
            capture_output=True,
            text=True,
            timeout=FIRST_SESSION_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"port {port} took no session in {FIRST_SESSION_TIMEOUT_S} s"
    if session.returncode != 0:
        return f"a session on port {port} failed:\n" + "\n".join(session.stderr.splitlines()[-10:])
    return None


def start_thrift_server(base_dir: Path, *, cores: int = 2, driver_memory: str = "3g") -> SparkServer:
    failures = []
    for start in range(1, STARTS + 1):
        # each start its own metastore and log: a stopped server's Derby files may stay locked
        start_dir = base_dir / f"start-{start}"
        start_dir.mkdir(mode=0o700)
        server = _start_once(start_dir, cores=cores, driver_memory=driver_memory)
        failure = _first_session_failure(server.port)
        if failure is None:
            return server
        stop_thrift_server(server)
        tail = "\n".join(server.log.read_text(errors="replace").splitlines()[-20:])
        failures.append(f"{failure}\nthe server's log ends:\n{tail}")
    raise RuntimeError("the Spark Thrift Server did not answer a first session:\n" + "\n".join(failures))


def _start_once(base_dir: Path, *, cores: int, driver_memory: str) -> SparkServer:
    home = spark_home()
    assert home is not None, missing_spark_reason()
    port = free_port()
    log = base_dir / "thrift-server.log"
    command = [
        str(home / "bin" / "spark-submit"),
        "--class",
        "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
        "--master",
        f"local[{cores}]",
        "--driver-memory",
        driver_memory,
        "--conf",
        f"spark.sql.warehouse.dir={base_dir / 'server-warehouse'}",
        "--conf",
        f"spark.driver.extraJavaOptions=-Dderby.system.home={base_dir}",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.sql.session.timeZone=UTC",
        "--hiveconf",
        "hive.server2.thrift.bind.host=127.0.0.1",
        "--hiveconf",
        f"hive.server2.thrift.port={port}",
        "spark-internal",
    ]
    env = {**os.environ, "SPARK_HOME": str(home)}
    java = java_executable()
    if java and "JAVA_HOME" not in env:
        env["JAVA_HOME"] = str(Path(java).resolve().parents[1])
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=base_dir,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    server = SparkServer(base_dir, port, process, log)
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not _answers(port):
        if process.poll() is not None or time.monotonic() > deadline:
            stop_thrift_server(server)
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
            raise RuntimeError(f"the Spark Thrift Server did not start on port {port}:\n{tail}")
        time.sleep(1)
    return server


def stop_thrift_server(server: SparkServer) -> None:
    if server.process.poll() is None:
        os.killpg(server.process.pid, signal.SIGTERM)
        try:
            server.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.process.pid, signal.SIGKILL)
            server.process.wait()
