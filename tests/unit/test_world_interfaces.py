"""The three interfaces of a world day over the same SQLite files: web (HTTP), MCP (official client), CLI."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from mcp import Client

from envpipeline.errors import SandboxError
from envpipeline.worlds.interfaces.health import check_live
from envpipeline.worlds.interfaces.mcp_server import TOOL_NAMES, create_mcp_server
from envpipeline.worlds.interfaces.serve import serve_world
from envpipeline.worlds.interfaces.web import serve_web
from tests.world_fixture import ME, make_day, query


@pytest.fixture
def day_dir(tmp_path):
    return make_day(tmp_path, day=3)


@pytest.fixture
def web(day_dir):
    server = serve_web(day_dir)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client
    server.stop()


# -- web --------------------------------------------------------------------------------------------
def test_storefront_lists_products_with_search_and_categories(web):
    page = web.get("/")
    assert page.status_code == 200
    for sku in ("SKU-KETTLE", "SKU-COFFEE", "SKU-TENT", "SKU-NOVEL"):
        assert f'id="product-{sku}"' in page.text
    assert 'id="search-form"' in page.text and '<label for="search">' in page.text
    assert '<option value="kitchen"' in page.text
    kitchen = web.get("/", params={"category": "kitchen"}).text
    assert "SKU-KETTLE" in kitchen and "SKU-NOVEL" not in kitchen
    found = web.get("/", params={"q": "novel"}).text
    assert "SKU-NOVEL" in found and "SKU-KETTLE" not in found
    product = web.get("/product/SKU-KETTLE")
    assert product.status_code == 200 and 'id="add-to-cart"' in product.text
    assert web.get("/product/NOPE").status_code == 404


def test_add_to_cart_and_checkout_creates_an_order(web, day_dir):
    added = web.post("/cart/add", data={"sku": "SKU-KETTLE", "quantity": "2"})
    assert added.status_code == 303 and added.headers["location"] == "/cart"
    web.post("/cart/add", data={"sku": "SKU-NOVEL", "quantity": "1"})
    cart = web.get("/cart").text
    assert 'id="cart-item-SKU-KETTLE"' in cart and 'id="checkout"' in cart
    assert query(day_dir, "shop", "SELECT added_at FROM cart_items")[0][0] == "2026-03-05T17:00:00"
    placed = web.post("/checkout")
    assert placed.status_code == 303 and placed.headers["location"] == "/orders/ORD-00002"
    ((number, status, total, placed_at, items),) = query(
        day_dir,
        "shop",
        "SELECT order_number, status, total_cents, placed_at, items_json FROM orders WHERE id = 2",
    )
    assert (number, status, total, placed_at) == (
        "ORD-00002",
        "placed",
        2 * 3299 + 1199,
        "2026-03-05T17:00:00",
    )
    assert {i["sku"]: i["quantity"] for i in json.loads(items)} == {"SKU-KETTLE": 2, "SKU-NOVEL": 1}
    assert query(day_dir, "shop", "SELECT COUNT(*) FROM cart_items") == [(0,)]
    assert query(day_dir, "shop", "SELECT stock FROM products WHERE sku = 'SKU-KETTLE'") == [(3,)]
    assert 'id="order-status">placed' in web.get("/orders/ORD-00002").text
    assert web.post("/checkout").status_code == 409  # empty cart


def test_out_of_stock_gives_a_409_page_and_changes_nothing(web, day_dir):
    refused = web.post("/cart/add", data={"sku": "SKU-TENT", "quantity": "1"})
    assert refused.status_code == 409 and "out of stock" in refused.text and 'id="error"' in refused.text
    web.post("/cart/add", data={"sku": "SKU-COFFEE", "quantity": "2"})
    import sqlite3

    with sqlite3.connect(day_dir / "apps" / "shop.sqlite") as db:  # stock sold elsewhere meanwhile
        db.execute("UPDATE products SET stock = 1 WHERE sku = 'SKU-COFFEE'")
    checkout = web.post("/checkout")
    assert checkout.status_code == 409 and "SKU-COFFEE" in checkout.text
    assert query(day_dir, "shop", "SELECT COUNT(*) FROM orders") == [(1,)]
    assert query(day_dir, "shop", "SELECT quantity FROM cart_items") == [(2,)]
    removed = web.post("/cart/remove", data={"sku": "SKU-COFFEE"})
    assert removed.status_code == 303 and 'id="cart-empty"' in web.get("/cart").text


def test_webmail_lists_reads_and_sends(web, day_dir):
    inbox = web.get("/mail", params={"folder": "inbox"})
    assert inbox.status_code == 200 and "Budget review" in inbox.text and 'class="unread"' in inbox.text
    assert web.get("/mail", params={"folder": "spam"}).status_code == 400
    message = web.get("/mail/2")
    assert message.status_code == 200 and "Can you send the numbers?" in message.text
    assert query(day_dir, "mail", "SELECT is_read FROM messages WHERE id = 2") == [(1,)]
    compose = web.get("/mail/compose").text
    assert 'id="compose-form"' in compose and '<label for="to">' in compose and ME in compose
    sent = web.post("/mail/send", data={"to": "maja@work.example", "subject": "Numbers", "body": "Attached."})
    assert sent.status_code == 303
    assert query(
        day_dir, "mail", "SELECT folder, sender, recipients, subject, sent_at FROM messages WHERE id = 4"
    ) == [("sent", ME, "maja@work.example", "Numbers", "2026-03-05T17:00:00")]
    assert "Numbers" in web.get("/mail", params={"folder": "sent"}).text
    assert (
        web.post("/mail/send", data={"to": "not-an-address", "subject": "x", "body": "y"}).status_code == 400
    )


# -- MCP --------------------------------------------------------------------------------------------
def test_mcp_tools_act_on_the_same_databases(day_dir):
    async def scenario():
        async with Client(create_mcp_server(day_dir)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == set(TOOL_NAMES)
            channels = await client.call_tool("chat_list_channels", {})
            assert not channels.is_error and "general" in channels.content[0].text
            posted = await client.call_tool("chat_post", {"channel": "team", "body": "Running late"})
            assert not posted.is_error, posted.content
            read = await client.call_tool("chat_read_channel", {"channel": "team", "limit": 1})
            assert "Running late" in read.content[0].text and "Standup" not in read.content[0].text
            sent = await client.call_tool("dm_send", {"peer": "olaf.b", "body": "Doing great, you?"})
            assert not sent.is_error
            thread = await client.call_tool("dm_read", {"peer": "olaf.b"})
            assert "Doing great" in thread.content[0].text
            mail = await client.call_tool(
                "mail_send", {"to": "olaf@home.example", "subject": "Dinner", "body": "Friday?"}
            )
            assert not mail.is_error
            inbox = await client.call_tool("mail_list", {"folder": "inbox"})
            assert "Budget review" in inbox.content[0].text
            message = await client.call_tool("mail_read", {"message_id": 1})
            assert "Hello!" in message.content[0].text
            unknown = await client.call_tool("chat_post", {"channel": "random", "body": "hi"})
            assert unknown.is_error and "unknown channel 'random'" in unknown.content[0].text
            assert "general" in unknown.content[0].text
            nobody = await client.call_tool("dm_read", {"peer": "nobody"})
            assert nobody.is_error and "no conversation" in nobody.content[0].text
            missing = await client.call_tool("mail_read", {"message_id": 99})
            assert missing.is_error and "no message with id 99" in missing.content[0].text
            empty = await client.call_tool("dm_send", {"peer": "olaf.b", "body": "  "})
            assert empty.is_error and "body must not be empty" in empty.content[0].text

    anyio.run(scenario)
    assert query(day_dir, "chat", "SELECT channel_id, author, body FROM messages WHERE id = 3") == [
        (2, "test.persona", "Running late")
    ]
    assert query(day_dir, "dm", "SELECT peer, direction, body FROM messages WHERE id = 2") == [
        ("olaf.b", "out", "Doing great, you?")
    ]
    assert query(
        day_dir, "mail", "SELECT folder, sender, recipients FROM messages WHERE subject = 'Dinner'"
    ) == [("sent", ME, "olaf@home.example")]
    assert query(day_dir, "mail", "SELECT is_read FROM messages WHERE id = 1") == [(1,)]


def test_serve_world_exposes_both_interfaces_over_http(day_dir):
    async def over_http(url):
        async with Client(url) as client:
            result = await client.call_tool("dm_send", {"peer": "maja.k", "body": "via http"})
            assert not result.is_error

    with serve_world(day_dir) as served:
        assert served.mcp_url.endswith("/mcp")
        assert httpx.get(served.web_url + "/").status_code == 200
        anyio.run(over_http, served.mcp_url)
    assert query(day_dir, "dm", "SELECT peer FROM messages WHERE body = 'via http'") == [("maja.k",)]
    with pytest.raises(httpx.HTTPError):
        httpx.get(served.web_url + "/", timeout=2)


def test_check_live_passes_and_leaves_the_day_unchanged(day_dir):
    from envpipeline.worlds.state import world_hash

    before = world_hash(day_dir)
    result = check_live(day_dir)
    assert result.passed, result.reason
    assert sorted(result.evidence["mcp_tools"]) == sorted(TOOL_NAMES)
    assert world_hash(day_dir) == before


def test_check_live_names_what_failed(day_dir):
    (day_dir / "apps" / "shop.sqlite").unlink()
    result = check_live(day_dir)
    assert not result.passed and "web GET / answered 404" in result.reason


# -- CLI --------------------------------------------------------------------------------------------
def test_world_shell_writes_into_home(day_dir):
    from envpipeline.sandbox.local import LocalSandbox
    from envpipeline.worlds.interfaces.cli import WorldShell

    if not LocalSandbox.available():
        with pytest.raises(SandboxError, match="no sandbox"):
            WorldShell(day_dir)
        pytest.skip("no bubblewrap or namespaces: the local sandbox cannot isolate here")
    with WorldShell(day_dir) as shell:
        listing = shell.run("pwd; echo $HOME; ls; cat todo.txt")
        assert listing.exit_code == 0, listing.stderr
        assert listing.stdout.splitlines()[:2] == ["/app", "/app"] and "notes" in listing.stdout
        wrote = shell.run(
            "mkdir -p documents && echo 'packing list' > documents/trip.md && rm notes/ideas.md"
        )
        assert wrote.exit_code == 0, wrote.stderr
        assert (day_dir / "home" / "documents" / "trip.md").read_text() == "packing list\n"
        assert not (day_dir / "home" / "notes" / "ideas.md").exists()
        (day_dir / "home" / "from-host.txt").write_text("hi")  # a change made outside the shell
        assert shell.run("cat from-host.txt").stdout == "hi"
        failed = shell.run("exit 3")
        assert failed.exit_code == 3
    assert (day_dir / "home" / "todo.txt").read_text().startswith("# TODO")
    assert not list(day_dir.glob(".home-*"))


# -- `worlds serve` ----------------------------------------------------------------------------------
def test_serve_command_prints_addresses_and_stops_on_ctrl_c(day_dir):
    import signal
    import subprocess
    import sys

    root = day_dir.parents[1]
    code = "from envpipeline.commands.worlds_serve import serve_command; serve_command()"
    process = subprocess.Popen(
        [sys.executable, "-c", code, day_dir.parent.name, "--day", "3", "--root", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [process.stdout.readline().split() for _ in range(3)]
        assert [line[0] for line in lines] == ["world:", "web:", "mcp:"], lines
        assert httpx.get(lines[1][1], timeout=10).status_code == 200
        assert lines[2][1].endswith("/mcp")
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    missing = subprocess.run(
        [sys.executable, "-c", code, "nobody", "--day", "1", "--root", str(root)],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 1 and "no world for 'nobody'" in missing.stderr
