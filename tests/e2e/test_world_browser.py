"""The world's web GUI in a real headless browser: Debian's Chromium driven by Playwright.

Playwright never downloads a browser here: it launches the system binary (``apt-get install
chromium``, part of ``make system-deps``). The test skips only when no Chromium binary exists.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from envpipeline.worlds.interfaces.web import serve_web
from tests.world_fixture import ME, make_day, query

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def browser_page():
    if not CHROMIUM:
        pytest.skip("no chromium binary: `apt-get install chromium` (make system-deps) for the browser test")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e .[dev])"
    )
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(10_000)
            yield page
        finally:
            browser.close()


def test_shopping_and_mail_by_clicking(browser_page, tmp_path):
    day_dir = make_day(tmp_path, day=2)
    server = serve_web(day_dir)
    page = browser_page
    try:
        page.goto(server.url + "/")
        assert page.title() == "Shop"
        page.fill("#search", "kettle")
        page.click("#search-submit")
        assert page.locator("#products tbody tr").count() == 1
        page.click("#product-link-SKU-KETTLE")
        assert page.text_content("#page-title") == "Electric kettle"
        page.get_by_label("Quantity").fill("2")
        page.click("#add-to-cart")
        page.wait_for_url("**/cart")
        assert page.text_content("#cart-item-SKU-KETTLE .quantity") == "2"
        page.click("#checkout")
        page.wait_for_url("**/orders/ORD-00002")
        assert page.text_content("#order-number") == "ORD-00002"
        assert page.text_content("#order-status") == "placed"

        ((number, status, total, items),) = query(
            day_dir, "shop", "SELECT order_number, status, total_cents, items_json FROM orders WHERE id = 2"
        )
        assert (number, status, total) == ("ORD-00002", "placed", 2 * 3299)
        assert json.loads(items) == [
            # the one order-item shape skills and the storefront share (worldstore.order_item)
            {
                "name": "Electric kettle",
                "price_cents": 3299,
                "product_id": 1,
                "quantity": 2,
                "sku": "SKU-KETTLE",
            }
        ]
        assert query(day_dir, "shop", "SELECT stock FROM products WHERE sku = 'SKU-KETTLE'") == [(3,)]

        page.click("#nav-mail")
        page.click("#message-link-2")
        assert page.text_content("#message-subject") == "Budget review"
        page.click("#reply")
        assert page.input_value("#to") == "maja@work.example"
        page.get_by_label("Message").fill("Numbers attached.")
        page.click("#send")
        page.wait_for_url("**/mail?folder=sent")
        assert query(
            day_dir, "mail", "SELECT sender, recipients, subject, body FROM messages WHERE id = 4"
        ) == [(ME, "maja@work.example", "Re: Budget review", "Numbers attached.")]
        assert query(day_dir, "mail", "SELECT is_read FROM messages WHERE id = 2") == [(1,)]
    finally:
        server.stop()
