"""A throwaway Spark Thrift Server for the tests and benchmarks, reached the way a cluster is reached.

`start_thrift_server` runs the pip pyspark's own `spark-submit` (it ships the
Hive and thrift-server jars) with HiveThriftServer2 on 127.0.0.1 and a free
port, a Derby metastore and a warehouse folder inside `base_dir`, and waits
until the port answers (tests/conftest.py's `spark_server` fixture;
bench/spark_build.py). Without Java or pyspark the Spark tests are skipped
locally and fail under CI (tests/support/environment.py).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from operations.spark import java_executable
from tests.support.environment import free_port

STARTUP_TIMEOUT_S = 180


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


def start_thrift_server(base_dir: Path, *, cores: int = 2, driver_memory: str = "3g") -> SparkServer:
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
