"""Milvus Lite as a server (`referent milvus serve`): several clients share one file
over gRPC, the file cannot be opened twice, data outlive a restart."""

from __future__ import annotations

import subprocess
import sys
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
