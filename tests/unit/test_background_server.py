"""The embedded uvicorn servers of the world interfaces leave the process's logging alone.

uvicorn's default logging config runs ``logging.config.dictConfig``, which closes every handler of
the process: the handlers of whoever embeds a server (a Dagster run's) stopped writing, and from
the gate's rollout threads it raced the MCP server creating its RichHandler (CI:
"'RichHandler' object has no attribute 'lock'")."""

from __future__ import annotations

import logging
import logging.config

import httpx

from envpipeline.worlds.interfaces._serving import BackgroundServer


async def _app(scope, receive, send) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


def test_starting_a_server_does_not_reconfigure_the_process_logging(tmp_path, monkeypatch):
    reconfigured: list[dict] = []
    monkeypatch.setattr(logging.config, "dictConfig", reconfigured.append)
    log_file = tmp_path / "run.log"
    handler = logging.FileHandler(log_file)
    logger = logging.getLogger("envpipeline.test.embedding")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    server = BackgroundServer(_app, name="test")
    try:
        url = server.start()
        assert httpx.get(url).text == "ok"
        assert reconfigured == []  # uvicorn's default would close every handler of the process
        logger.info("still written after the server started")
        handler.flush()
        assert "still written after the server started" in log_file.read_text()
    finally:
        server.stop()
        logger.removeHandler(handler)
        handler.close()
