"""Milvus Lite as a server (`referent milvus serve`): several clients share one file
over gRPC, the file cannot be opened twice, data outlive a restart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common.errors import ConfigurationError
from devservices.local_milvus import LocalMilvus
from retrieval.milvus_index import MilvusIndex
from retrieval.models import Chunk
from tests.services import free_port

pytestmark = pytest.mark.milvus


def test_two_clients_share_one_server_and_data_outlive_a_restart(tmp_path):
    server = LocalMilvus(tmp_path / "milvus.db", free_port())
    server.start()
    try:
        # The file is the server's: another process cannot serve it too; a taken port is refused.
        other = subprocess.run(
            [str(Path(sys.executable).parent / "referent"), "milvus", "serve", "--db",
             str(tmp_path / "milvus.db"), "--port", str(free_port())],
            capture_output=True, text=True, timeout=60)
        assert other.returncode == 1 and "open in another process" in other.stderr, other
        with pytest.raises(ConfigurationError, match="already taken"):
            LocalMilvus(tmp_path / "other.db", server.port).start()

        writer, reader = MilvusIndex(server.uri), MilvusIndex(server.uri)
        writer.ensure_collection("kb")
        writer.upsert("kb", [Chunk("c#0", "c", "华东区销售", "华东区7月销售额增长",
                                   entity_ids=("region.east",))])
        assert [h.chunk_id for h in reader.search("kb", "华东区", limit=3,
                                                  entity_ids=["region.east"])] == ["c#0"]
        writer.close()
        reader.close()

        assert server.stop() is True and server.stop() is False
        server.start()
        again = MilvusIndex(server.uri)
        assert [h.chunk_id for h in again.search("kb", "销售额", limit=3)] == ["c#0"]
        again.close()
    finally:
        server.stop()


def test_a_bad_file_name_is_refused_with_the_rule(tmp_path):
    with pytest.raises(ConfigurationError, match="1-36 characters"):
        LocalMilvus(tmp_path / "名字.db", free_port())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal")
def test_a_server_process_killed_outright_takes_its_milvus_with_it(tmp_path):
    """`referent serve` killed with SIGKILL runs no cleanup: the milvus binary must
    still go, or it keeps the port and the file's data for nobody."""
    owner = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from devservices.local_milvus import LocalMilvus; "
         f"m = LocalMilvus(Path({str(tmp_path / 'milvus.db')!r}), {free_port()}); m.start(); "
         "print(m.pid, flush=True); time.sleep(300)"],
        cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, text=True)
    milvus_pid = None
    try:
        milvus_pid = int(owner.stdout.readline())
        os.kill(milvus_pid, 0)  # running
        owner.send_signal(signal.SIGKILL)
        owner.wait(10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _alive(milvus_pid):
            time.sleep(0.2)
        assert not _alive(milvus_pid), "the milvus binary outlived the process that started it"
    finally:
        owner.kill()
        owner.stdout.close()
        if milvus_pid is not None and _alive(milvus_pid):  # the failure case: clean up
            os.kill(milvus_pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting for its (new) parent to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_server_started_from_a_worker_thread_outlives_the_thread(tmp_path):
    """The kernel's parent-death signal follows the thread that forked: a restart from a
    supervisor thread must not take the server down when that thread returns."""
    import threading

    server = LocalMilvus(tmp_path / "milvus.db", free_port())
    worker = threading.Thread(target=server.start)
    worker.start()
    worker.join()
    try:
        time.sleep(1.0)
        assert server.running() and _alive(server.pid)
        index = MilvusIndex(server.uri)
        index.ensure_collection("kb")
        index.close()
    finally:
        server.stop()
